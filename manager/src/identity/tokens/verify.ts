import type { Logger } from "@tjm/platform";
import type { MiddlewareHandler } from "hono";
import {
  createRemoteJWKSet,
  decodeJwt,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import { ApiError } from "../../platform/errors.ts";
import { ACCOUNT_PORTAL_AUDIENCE, ADMIN_CONSOLE_AUDIENCE } from "../resources.ts";
import { type Audience, accountPrincipalOf, operatorOf, type Principals, tenantOf } from "./principals.ts";
import type { Standing, TokenResource } from "./standing.ts";

/** An issuer whose tokens a route may accept. */
export interface IssuerOptions {
  issuer: string;
  /** Skips OIDC discovery when set. */
  jwksUrl?: string | undefined;
}

export interface TokenAuthOptions {
  /** TJM's own issuer (the built-in provider): every audience, and every token's standing checked. */
  tjm: IssuerOptions;
  /** An external provider for operator sign-in: trusted for the operations audience only. */
  externalOperator?: IssuerOptions | undefined;
  logger: Logger;
  /** Whether a token of TJM's issuer still stands (identity/tokens/standing.ts); asked on every request. */
  standing: (claims: JWTPayload, resource: TokenResource) => Promise<Standing>;
  /** OPERATOR_REQUIRE_MFA: operator tokens whose amr lacks "mfa" are refused (auth.mfa_required). */
  operatorRequiresMfa?: boolean;
  fetch?: typeof fetch;
}

/** Whether the token's sign-in used a second factor (RFC 8176's "mfa" in its amr). */
export function signedInWithSecondFactor(claims: JWTPayload): boolean {
  return Array.isArray(claims.amr) && claims.amr.includes("mfa");
}

/** Asymmetric algorithms only: "none" and shared-secret HMAC tokens are refused outright. */
const ACCEPTED_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];
const CLOCK_TOLERANCE_S = 5;

/**
 * A verified token is remembered for up to a minute (never past its expiry): checking an RSA
 * signature costs ~0.1 ms of CPU, a fifth of a submit, and clients reuse one token for many
 * requests. The minute bounds how long a key the issuer withdraws keeps working here.
 */
const VERIFIED_TOKEN_TTL_MS = 60_000;
const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

export class VerifiedTokens {
  private readonly entries = new Map<string, { claims: JWTPayload; until: number }>();

  get(token: string, now: number): JWTPayload | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (entry.until <= now) {
      this.entries.delete(token);
      return undefined;
    }
    return entry.claims;
  }

  remember(token: string, claims: JWTPayload, now: number): void {
    if (this.entries.size >= VERIFIED_TOKEN_CACHE_SIZE) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const expiry = typeof claims.exp === "number" ? claims.exp * 1000 : now;
    this.entries.set(token, { claims, until: Math.min(expiry, now + VERIFIED_TOKEN_TTL_MS) });
  }
}

/** Finds the JWKS from the issuer's discovery document once; a failure is retried on the next request. */
function createKeyResolver(options: IssuerOptions, doFetch: typeof fetch): JWTVerifyGetKey {
  let keySet: Promise<JWTVerifyGetKey> | undefined;
  const discover = async (): Promise<JWTVerifyGetKey> => {
    let jwksUrl = options.jwksUrl;
    if (!jwksUrl) {
      const discoveryUrl = `${options.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
      const response = await doFetch(discoveryUrl, { signal: AbortSignal.timeout(5000) });
      if (!response.ok) throw new Error(`OIDC discovery at ${discoveryUrl} answered ${response.status}`);
      const document = (await response.json()) as { jwks_uri?: unknown };
      if (typeof document.jwks_uri !== "string")
        throw new Error(`OIDC discovery at ${discoveryUrl} has no jwks_uri`);
      jwksUrl = document.jwks_uri;
    }
    // A token naming a key not cached yet (one just rotated in) refetches the set at once; the
    // one-second cooldown only bounds how often tokens with unknown key ids make us fetch.
    return createRemoteJWKSet(new URL(jwksUrl), { timeoutDuration: 5000, cooldownDuration: 1000 });
  };
  return async (header, token) => {
    keySet ??= discover().catch((err) => {
      keySet = undefined;
      throw err;
    });
    return (await keySet)(header, token);
  };
}

function audiences(claims: JWTPayload): string[] {
  if (typeof claims.aud === "string") return [claims.aud];
  return Array.isArray(claims.aud) ? claims.aud : [];
}

function describeRejection(err: unknown): string {
  if (err instanceof errors.JWTExpired) return "token has expired";
  if (err instanceof errors.JWTClaimValidationFailed) return `claim "${err.claim}" is invalid: ${err.reason}`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return "signature verification failed";
  if (err instanceof errors.JOSEAlgNotAllowed) return "signing algorithm is not accepted";
  if (err instanceof errors.JWKSNoMatchingKey) return "no key of the issuer matches the token";
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return "token is malformed";
  return "token could not be verified";
}

/** Verifies tokens of one issuer: signature, issuer, expiry, not-before. */
function issuerVerifier(
  options: IssuerOptions,
  logger: Logger,
  doFetch: typeof fetch,
): (token: string) => Promise<JWTPayload> {
  const getKey = createKeyResolver(options, doFetch);
  const verified = new VerifiedTokens();
  return async (token) => {
    const now = Date.now();
    const cached = verified.get(token, now);
    if (cached) return cached;
    try {
      const { payload } = await jwtVerify(token, getKey, {
        issuer: options.issuer,
        algorithms: ACCEPTED_ALGORITHMS,
        requiredClaims: ["exp", "sub"],
        clockTolerance: CLOCK_TOLERANCE_S,
      });
      verified.remember(token, payload, now);
      return payload;
    } catch (err) {
      const keysUnavailable = err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid;
      if (err instanceof errors.JOSEError && !keysUnavailable) {
        const code = err instanceof errors.JWTExpired ? "auth.token_expired" : "auth.token_invalid";
        throw new ApiError(code, `Invalid bearer token: ${describeRejection(err)}`);
      }
      logger.error("token verification unavailable", { err, issuer: options.issuer });
      throw new ApiError(
        "auth.verification_unavailable",
        "Token verification is unavailable: the issuer's keys could not be fetched",
      );
    }
  };
}

function bearerToken(header: string | undefined): string {
  if (!header) throw new ApiError("auth.token_missing", "Missing bearer token in the authorization header");
  const match = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i.exec(header.trim());
  if (!match?.[1])
    throw new ApiError("auth.token_missing", "The authorization header must be 'Bearer <token>'");
  return match[1];
}

function claimedIssuer(token: string): string {
  try {
    const { iss } = decodeJwt(token);
    if (typeof iss === "string") return iss;
  } catch {
    // Reported below, as for any token without an issuer.
  }
  throw new ApiError("auth.token_invalid", "Invalid bearer token: token is malformed");
}

/**
 * Bearer authentication for each kind of route. A token is verified with the keys of the
 * issuer it names, when that issuer is trusted for the route's resource: TJM's own issuer for
 * every resource, an external operator issuer for the operations audience only. 401 for a
 * token that is not valid here, 403 for a valid token meant for someone else.
 */
export function createTokenAuth(options: TokenAuthOptions) {
  const doFetch = options.fetch ?? fetch;
  /** The operator principal, once the step-up rule (OPERATOR_REQUIRE_MFA) is met. */
  const operatorPrincipal = (claims: JWTPayload) => {
    if (options.operatorRequiresMfa && !signedInWithSecondFactor(claims)) {
      throw new ApiError(
        "auth.mfa_required",
        "Operator routes need a sign-in with a second factor: sign in again asking for the acr urn:tjm:acr:mfa as essential",
      );
    }
    return operatorOf(claims);
  };
  const tjm = issuerVerifier(options.tjm, options.logger, doFetch);
  const external = options.externalOperator && {
    issuer: options.externalOperator.issuer,
    verify: issuerVerifier(options.externalOperator, options.logger, doFetch),
  };

  /** Signature, issuer and audience, not standing; `fromTjm`: standing is TJM's to judge. */
  async function verify(token: string, resource: TokenResource, audience: string) {
    const issuer = claimedIssuer(token);
    const fromTjm = issuer === options.tjm.issuer;
    if (!fromTjm && issuer !== external?.issuer) {
      throw new ApiError("auth.token_invalid", `Invalid bearer token: the issuer ${issuer} is not trusted`);
    }
    if (!fromTjm && resource !== "operations") {
      throw new ApiError(
        "auth.token_invalid",
        `Invalid bearer token: tokens of ${issuer} are trusted for the operations audience only`,
      );
    }
    const claims = fromTjm
      ? await tjm(token)
      : await (external as NonNullable<typeof external>).verify(token);
    if (!audiences(claims).includes(audience)) {
      throw new ApiError("auth.audience_missing", `Token audience does not include ${audience}`);
    }
    return { claims, fromTjm };
  }

  async function authenticate(header: string | undefined, resource: TokenResource, audience: string) {
    const { claims, fromTjm } = await verify(bearerToken(header), resource, audience);
    if (fromTjm) {
      const standing = await options.standing(claims, resource);
      if (!standing.ok) {
        throw new ApiError(
          standing.status === 403 ? "auth.token_refused" : "auth.token_revoked",
          `Token refused: ${standing.reason}`,
        );
      }
    }
    return claims;
  }

  function bearerAuth<Name extends string, Principal>(
    name: Name,
    resource: TokenResource,
    audience: string,
    principal: (claims: JWTPayload) => Principal,
  ): MiddlewareHandler<{ Variables: Record<Name, Principal> }> {
    return async (c, next) => {
      c.set(name, principal(await authenticate(c.req.header("authorization"), resource, audience)));
      await next();
    };
  }

  return {
    verify,
    /** Operator routes: the operations audience (OIDC_OPERATIONS_ADMIN_AUDIENCE). */
    operator: (audience: string) => bearerAuth("operator", "operations", audience, operatorPrincipal),
    /** Tenant routes (/api/v1/projects/...): the tenant audience; the route checks the projects. */
    tenant: (audience: string) => bearerAuth("tenant", "tenant", audience, tenantOf),
    /** Every audience's check, as the route factories (tokens/audiences.ts) call it. */
    audiences: (configured: ConfiguredAudiences): AudienceAuthenticator => {
      const checks: { [A in Audience]: [TokenResource, string, (claims: JWTPayload) => Principals[A]] } = {
        operator: ["operations", configured.operations, operatorPrincipal],
        tenant: ["tenant", configured.tenant, tenantOf],
        account: ["account-portal", ACCOUNT_PORTAL_AUDIENCE, accountPrincipalOf],
        clientAdmin: ["admin-console", ADMIN_CONSOLE_AUDIENCE, accountPrincipalOf],
      };
      return async (audience, authorization) => {
        const [resource, expected, principal] = checks[audience];
        return principal(
          await authenticate(authorization, resource, expected),
        ) as Principals[typeof audience];
      };
    },
  };
}

/** The configured audiences (the account portal's and the admin console's are fixed). */
export interface ConfiguredAudiences {
  /** OIDC_OPERATIONS_ADMIN_AUDIENCE. */
  operations: string;
  /** OIDC_TENANT_AUDIENCE. */
  tenant: string;
}

/** Authenticates a request's authorization header for one audience: its principal, or an ApiError (401, 403). */
export type AudienceAuthenticator = <A extends Audience>(
  audience: A,
  authorization: string | undefined,
) => Promise<Principals[A]>;
