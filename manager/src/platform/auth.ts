import type { Logger } from "@tjm/platform";
import type { MiddlewareHandler } from "hono";
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import { ApiError } from "./errors.ts";

export interface OperatorAuthOptions {
  issuer: string;
  /** Skips OIDC discovery when set. */
  jwksUrl?: string | undefined;
  audience: string;
  logger: Logger;
  fetch?: typeof fetch;
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

export interface Operator {
  subject: string;
  claims: JWTPayload;
}

/** Finds the JWKS from the issuer's discovery document once; a failure is retried on the next request. */
function createKeyResolver(options: OperatorAuthOptions): JWTVerifyGetKey {
  const doFetch = options.fetch ?? fetch;
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
    return createRemoteJWKSet(new URL(jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30_000 });
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

/** Reads and verifies the bearer token of a request; the claims of a valid one. */
function bearerVerifier(options: OperatorAuthOptions): (header: string | undefined) => Promise<JWTPayload> {
  const getKey = createKeyResolver(options);
  const verified = new VerifiedTokens();
  async function verify(token: string, now: number): Promise<JWTPayload> {
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
        throw new ApiError("UNAUTHORIZED", `Invalid bearer token: ${describeRejection(err)}`);
      }
      options.logger.error("token verification unavailable", { err });
      throw new ApiError(
        "SERVICE_UNAVAILABLE",
        "Token verification is unavailable: the issuer's keys could not be fetched",
      );
    }
  }
  return async (header) => {
    if (!header) throw new ApiError("UNAUTHORIZED", "Missing bearer token in the authorization header");
    const match = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i.exec(header.trim());
    if (!match?.[1]) throw new ApiError("UNAUTHORIZED", "The authorization header must be 'Bearer <token>'");
    const token = match[1];
    const now = Date.now();
    const claims = verified.get(token, now) ?? (await verify(token, now));
    if (!audiences(claims).includes(options.audience)) {
      throw new ApiError("FORBIDDEN", `Token audience does not include ${options.audience}`);
    }
    return claims;
  };
}

/**
 * Operator routes: a bearer JWT signed by the issuer (signature, issuer, expiry, not-before)
 * whose audience includes the operations audience. 401 for any token that is not valid,
 * 403 for a valid token meant for someone else.
 */
export function operatorAuth(
  options: OperatorAuthOptions,
): MiddlewareHandler<{ Variables: { operator: Operator } }> {
  return bearerAuth(options, "operator", (claims) => ({ subject: claims.sub as string, claims }));
}

/** Verifies the request's bearer token and sets what `principal` makes of its claims as `name`. */
function bearerAuth<Name extends string, Principal>(
  options: OperatorAuthOptions,
  name: Name,
  principal: (claims: JWTPayload) => Principal,
): MiddlewareHandler<{ Variables: Record<Name, Principal> }> {
  const verify = bearerVerifier(options);
  return async (c, next) => {
    c.set(name, principal(await verify(c.req.header("authorization"))));
    await next();
  };
}

/** The claim of a tenant token listing the project ids it may act on ("*": every project). */
export const TENANT_PROJECTS_CLAIM = "tjm_projects";

export interface Tenant {
  subject: string;
  /** Project ids from the tjm_projects claim; "*" grants every project. */
  projects: string[];
}

/**
 * Tenant routes (/api/v1/projects/...): a bearer JWT from the same issuer whose audience
 * includes the tenant audience. Which projects it grants is read here and checked by the route.
 */
export function tenantAuth(
  options: OperatorAuthOptions,
): MiddlewareHandler<{ Variables: { tenant: Tenant } }> {
  return bearerAuth(options, "tenant", (claims) => {
    const granted = claims[TENANT_PROJECTS_CLAIM];
    const projects = Array.isArray(granted)
      ? granted.filter((item): item is string => typeof item === "string")
      : [];
    return { subject: claims.sub as string, projects };
  });
}

export function tenantMayActOn(tenant: Tenant, projectId: string): boolean {
  return tenant.projects.includes("*") || tenant.projects.includes(projectId);
}
