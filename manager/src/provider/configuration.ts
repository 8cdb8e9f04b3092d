/**
 * oidc-provider's configuration for TJM: what it issues, to whom, for how long, and what stays
 * off. Each choice is explained in docs/security.md; the protocol itself is the provider's.
 */
import type { Logger } from "@tjm/platform";
import Provider, {
  type Configuration,
  errors,
  interactionPolicy,
  type KoaContextWithOIDC,
} from "oidc-provider";
import { findAccount, issuedBeforeRevocation } from "../identity/accounts/index.ts";
import { TJM_CLIENT_METADATA } from "../identity/clients/index.ts";
import { ACR_VALUES } from "../identity/factors/sign-in.ts";
import { accountMayHold, requiredRole, type TjmResource } from "../identity/resources.ts";
import { AUTHORIZATION_VERSION_CLAIM, GRANT_CLAIM, ROLES_CLAIM } from "../identity/tokens/standing.ts";
import type { Sql } from "../platform/db.ts";
import { postgresAdapter } from "./adapter.ts";

/** Where the provider sends a browser to sign in or consent, below the provider's own path. */
export const INTERACTION_PATH = "/interaction";

/**
 * The scope a grant holds a TJM resource with. TJM's resources have no finer scopes; the grant
 * still needs one to remember the resource (oidc-provider drops a resource without scopes).
 */
export const RESOURCE_ACCESS_SCOPE = "access";

/** Codes are exchanged by the client's back end within seconds; a minute is generous. */
const AUTHORIZATION_CODE_TTL_S = 60;
const INTERACTION_TTL_S = 600;

export interface ProviderSettings {
  issuer: string;
  sql: Sql;
  logger: Logger;
  resources: TjmResource[];
  /** Private JWKs; the first signs. */
  jwks: object[];
  cookieKeys: string[];
  accessTokenTtlSeconds: number;
  refreshTokenLifetimeSeconds: number;
  sessionTtlSeconds: number;
  /** Hosts the provider may call on private addresses (PROVIDER_PRIVATE_NETWORK_HOSTS). */
  privateNetworkHosts: readonly string[];
  /** Renders oidc-provider's error responses to browsers (the sign-in pages' error page). */
  renderError: NonNullable<Configuration["renderError"]>;
  logoutSource: NonNullable<NonNullable<Configuration["features"]>["rpInitiatedLogout"]>["logoutSource"];
  postLogoutSuccessSource: NonNullable<
    NonNullable<Configuration["features"]>["rpInitiatedLogout"]
  >["postLogoutSuccessSource"];
}

/** Asymmetric algorithms only: client secrets are stored as HMACs, so no HS* and no client_secret_jwt. */
const ASYMMETRIC_SIGNING = ["RS256", "PS256", "ES256", "EdDSA"] as const;

interface TjmClientMetadata {
  first_party?: boolean;
  authorization_version?: number;
  /** Epoch seconds of the version's last change (client management). */
  authorization_changed_at?: number;
  resource_scopes?: Record<string, string[]>;
  project_ids?: string[];
  /** The client's own access-token lifetime (client management), within the installation's bounds. */
  access_token_ttl?: number;
  /** The account roles its tokens may carry (client management): the roles claim is the account's ∩ these. */
  roles?: string[];
  /** The accounts that may use it; empty: every account. */
  user_ids?: string[];
  /** The identity sources its accounts may come from; empty: every source. */
  directory_sources?: string[];
}

/** The identity source of every account that signs in at TJM's provider. */
const BUILT_IN_DIRECTORY = "built-in";

/** Why the client may not be used by the account (its users and directory sources); undefined: it may. */
function accountRefusal(client: unknown, accountId: string): string | undefined {
  const metadata = tjmMetadata(client);
  const users = metadata?.user_ids ?? [];
  if (users.length > 0 && !users.includes(accountId)) return "this account is not among the client's users";
  const sources = metadata?.directory_sources ?? [];
  if (sources.length > 0 && !sources.includes(BUILT_IN_DIRECTORY)) {
    return "the client does not accept accounts of TJM's built-in directory";
  }
  return undefined;
}

function tjmMetadata(client: unknown): TjmClientMetadata {
  return client as TjmClientMetadata;
}

/** Every source of a token that names a moment it was issued (codes, refresh tokens). */
function issuedAt(token: unknown): number | undefined {
  const iat = (token as { iat?: unknown } | undefined)?.iat;
  return typeof iat === "number" ? iat : undefined;
}

/**
 * Whether a token the provider stored was issued under an older authorization version of its
 * client than the client has now: an opaque access token names its version (extraTokenClaims
 * stores it in `extra`); a refresh token names none, so its issue time is compared with the
 * version's last change (one of that very second is refused too: iat has whole seconds). A code
 * is not: it lives a minute and what it is exchanged for is issued under the current version.
 */
function issuedUnderOlderVersion(token: unknown, client: unknown): boolean {
  const metadata = tjmMetadata(client);
  if (!metadata) return false;
  const version = (token as { extra?: Record<string, unknown> } | undefined)?.extra?.[
    AUTHORIZATION_VERSION_CLAIM
  ];
  if (typeof version === "number") return version < (metadata.authorization_version ?? 1);
  if ((token as { kind?: unknown } | undefined)?.kind !== "RefreshToken") return false;
  const changedAt = metadata.authorization_changed_at;
  const iat = issuedAt(token);
  return changedAt !== undefined && iat !== undefined && iat <= Math.floor(changedAt);
}

function indicatorList(resource: unknown): string[] {
  if (typeof resource === "string") return [resource];
  return Array.isArray(resource) ? resource.filter((item): item is string => typeof item === "string") : [];
}

/**
 * The resources a token request with `token` (a code or refresh token) is for: the one its
 * `resource` parameter names at the token endpoint, else every one the token was requested with.
 */
function targetIndicators(ctx: KoaContextWithOIDC | undefined, token: unknown): string[] {
  const asked = ctx?.oidc?.route === "token" ? indicatorList(ctx.oidc.params?.resource) : [];
  return asked.length > 0 ? asked : indicatorList((token as { resource?: unknown } | undefined)?.resource);
}

type GrantResources = {
  resources?: Record<string, string>;
  rejected?: { resources?: Record<string, string> };
};

/**
 * A first-party client's grant holds exactly the requested resources the account's roles allow
 * now; the others are recorded as rejected, so the consent prompt does not ask for them.
 * Answers whether the grant changed.
 */
function grantResourcesByRole(
  grant: InstanceType<Provider["Grant"]>,
  indicators: string[],
  resources: Map<string, TjmResource>,
  roles: readonly string[],
): boolean {
  const held = grant as unknown as GrantResources;
  let changed = false;
  for (const indicator of indicators) {
    const resource = resources.get(indicator);
    const may = resource !== undefined && accountMayHold(resource, roles);
    const holds = held.resources?.[indicator] !== undefined;
    const rejected = held.rejected?.resources?.[indicator] !== undefined;
    if (may && (!holds || rejected)) {
      delete held.rejected?.resources?.[indicator];
      grant.addResourceScope(indicator, RESOURCE_ACCESS_SCOPE);
      changed = true;
    } else if (!may && (holds || !rejected)) {
      delete held.resources?.[indicator];
      grant.rejectResourceScope(indicator, RESOURCE_ACCESS_SCOPE);
      changed = true;
    }
  }
  return changed;
}

/**
 * The consent prompt of a third-party client also asks when the request names a resource its
 * grant does not hold yet: resources carry no scopes here, so the provider's own check would
 * not notice a new one.
 */
function interactionPolicyWithResourceConsent() {
  const policy = interactionPolicy.base();
  // findAccount refuses a session's account that is disabled, deleted or signed out everywhere
  // since the session's sign-in; oidc-provider then has no account and no grant, and its consent
  // checks failed with a 500. Such a session signs in again instead.
  policy
    .get("login")
    ?.checks.add(
      new interactionPolicy.Check(
        "tjm_account_unavailable",
        "the session's account can no longer use it; sign in again",
        (ctx) =>
          ctx.oidc.session?.accountId && !ctx.oidc.account
            ? interactionPolicy.Check.REQUEST_PROMPT
            : interactionPolicy.Check.NO_NEED_TO_PROMPT,
      ),
    );
  const consent = policy.get("consent");
  consent?.checks.add(
    new interactionPolicy.Check(
      "tjm_resource_not_granted",
      "the request names a resource this client was not granted by the account",
      (ctx) => {
        const grant = ctx.oidc.grant;
        const wanted = Object.keys(ctx.oidc.resourceServers ?? {});
        const granted = (grant?.resources ?? {}) as Record<string, string>;
        const rejected = ((grant as GrantResources | undefined)?.rejected?.resources ?? {}) as Record<
          string,
          string
        >;
        return wanted.some((indicator) => !(indicator in granted) && !(indicator in rejected))
          ? interactionPolicy.Check.REQUEST_PROMPT
          : interactionPolicy.Check.NO_NEED_TO_PROMPT;
      },
    ),
  );
  return policy;
}

export function providerConfiguration(settings: ProviderSettings): Configuration {
  const byIndicator = new Map(settings.resources.map((resource) => [resource.indicator, resource]));
  const tenant = settings.resources.find((resource) => resource.name === "tenant");
  const accessTokenTtl = (client: unknown) =>
    Math.min(
      settings.accessTokenTtlSeconds,
      tjmMetadata(client)?.access_token_ttl ?? Number.POSITIVE_INFINITY,
    );

  return {
    adapter: postgresAdapter(settings.sql),
    jwks: { keys: settings.jwks as never },
    cookies: {
      keys: settings.cookieKeys,
      long: { signed: true, httpOnly: true, sameSite: "lax" },
      short: { signed: true, httpOnly: true, sameSite: "lax" },
    },
    pkce: { required: () => true },
    responseTypes: ["code"],
    clientAuthMethods: ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
    enabledJWA: {
      clientAuthSigningAlgValues: [...ASYMMETRIC_SIGNING],
      idTokenSigningAlgValues: ["RS256"],
      requestObjectSigningAlgValues: [...ASYMMETRIC_SIGNING],
      userinfoSigningAlgValues: ["RS256"],
      introspectionSigningAlgValues: ["RS256"],
      authorizationSigningAlgValues: ["RS256"],
    },
    scopes: ["openid", "offline_access", "email", "profile"],
    // amr and acr say how the account signed in (a password, a second factor: docs/mfa.md); amr
    // is in no default claim set, so the ID token would leave it out.
    claims: {
      openid: ["sub", "acr", "amr"],
      email: ["email", "email_verified"],
      profile: ["name"],
    },
    conformIdTokenClaims: true,
    extraClientMetadata: { properties: [...TJM_CLIENT_METADATA] },
    ttl: {
      AccessToken: settings.accessTokenTtlSeconds,
      ClientCredentials: (ctx) => accessTokenTtl(ctx?.oidc?.client),
      IdToken: settings.accessTokenTtlSeconds,
      AuthorizationCode: AUTHORIZATION_CODE_TTL_S,
      Interaction: INTERACTION_TTL_S,
      Session: settings.sessionTtlSeconds,
      Grant: settings.refreshTokenLifetimeSeconds,
      // Rotation hands the new token what is left of the first one's lifetime: the chain ends
      // refreshTokenLifetimeSeconds after the sign-in, however often it is refreshed.
      RefreshToken: (ctx) => {
        const rotated = ctx?.oidc?.entities.RotatedRefreshToken;
        return rotated ? rotated.remainingTTL : settings.refreshTokenLifetimeSeconds;
      },
    },
    rotateRefreshToken: true,
    // No token outlives the sign-in session it came from: a refresh token ends with its session
    // (logout, expiry, a session revoked) whatever scope was asked, so every access token it
    // mints names a live session. offline_access only makes a third-party client eligible for a
    // refresh token; unattended integrations use client credentials.
    expiresWithSession: async () => true,
    // The provider keeps offline_access only with prompt=consent (OIDC Core §11), a prompt
    // first-party clients never show: theirs get refresh tokens that end with the session.
    issueRefreshToken: async (_ctx, client, code) =>
      client.grantTypeAllowed("refresh_token") &&
      (code.scopes.has("offline_access") || tjmMetadata(client).first_party === true),
    // Without acr values the provider drops acr altogether; asked for as essential (the claims
    // parameter), urn:tjm:acr:mfa makes a session signed in with a password alone sign in again.
    acrValues: [...ACR_VALUES],
    features: {
      devInteractions: { enabled: false },
      claimsParameter: { enabled: true },
      clientCredentials: { enabled: true },
      // A client revokes only its own tokens; another's is ignored (RFC 7009 answers 200 either
      // way), so a leaked client cannot log a different client's users out.
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      userinfo: { enabled: true },
      // A client introspects only its own tokens, and one issued under an older authorization
      // version of the client is inactive, as the Manager's standing check has it.
      introspection: {
        enabled: true,
        allowedPolicy: (ctx, client, token) =>
          token.clientId === client.clientId && !issuedUnderOlderVersion(token, ctx.oidc.client),
      },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: settings.logoutSource,
        postLogoutSuccessSource: settings.postLogoutSuccessSource,
      },
      backchannelLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator, client) => {
          const resource = byIndicator.get(indicator);
          const granted = tjmMetadata(client).resource_scopes ?? {};
          if (!resource || !(resource.audience in granted)) {
            throw new errors.InvalidTarget(`this client may not get tokens for ${indicator}`);
          }
          return {
            scope: [RESOURCE_ACCESS_SCOPE, ...(granted[resource.audience] ?? [])].join(" "),
            audience: resource.audience,
            accessTokenTTL: accessTokenTtl(client),
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "RS256" } },
          };
        },
      },
    },
    interactions: {
      policy: interactionPolicyWithResourceConsent(),
      url: (_ctx, interaction) =>
        `${new URL(settings.issuer).pathname}${INTERACTION_PATH}/${interaction.uid}`,
    },
    // First-party clients (the Admin console, the account portal) skip the consent prompt: their
    // grant is made here with what they asked and the account's roles allow, and kept in step
    // with those roles at each authorization.
    loadExistingGrant: async (ctx) => {
      const client = ctx.oidc.client;
      const session = ctx.oidc.session;
      if (!client || !session?.accountId) return undefined;
      const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId) ?? undefined;
      const refusal = accountRefusal(client, session.accountId);
      if (refusal) throw new errors.AccessDenied(refusal);
      const existing = grantId ? await ctx.oidc.provider.Grant.find(grantId) : undefined;
      if (!tjmMetadata(client).first_party) return existing;
      const account = await findAccount(settings.sql, session.accountId);
      const grant =
        existing ?? new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      if (!existing) {
        grant.addOIDCScope(
          ctx.oidc.requestParamScopes ? [...ctx.oidc.requestParamScopes].join(" ") : "openid",
        );
      }
      const indicators = Object.keys(ctx.oidc.resourceServers ?? {});
      const changed = grantResourcesByRole(grant, indicators, byIndicator, account?.roles ?? []);
      if (!existing || changed) await grant.save();
      return grant;
    },
    findAccount: async (ctx, sub, token) => {
      const account = await findAccount(settings.sql, sub);
      if (!account || account.disabled) return undefined;
      const since = issuedAt(token) ?? ctx.oidc?.session?.authTime();
      if (since !== undefined && issuedBeforeRevocation(since, account.tokensValidAfter)) return undefined;
      // The Manager's standing check, at the provider's own token uses: a refresh token, code or
      // userinfo access token issued before the client's grants last changed is refused.
      const refusal = token === undefined ? undefined : accountRefusal(ctx.oidc?.client, account.id);
      if (refusal) throw new errors.InvalidGrant(refusal);
      if (token !== undefined && issuedUnderOlderVersion(token, ctx.oidc?.client)) {
        if (ctx.oidc?.route === "token") {
          throw new errors.InvalidGrant(
            "issued under an older authorization version of the client; sign in again",
          );
        }
        return undefined;
      }
      // A token only for a resource the account's roles allow now (role removed since the
      // sign-in, or a client asking for more than its grant holds). Checked here, before a
      // refresh token is rotated, so a refused resource leaves the refresh token usable.
      if (token !== undefined) {
        const refused = targetIndicators(ctx, token)
          .map((indicator) => byIndicator.get(indicator))
          .find((resource) => resource !== undefined && !accountMayHold(resource, account.roles));
        if (refused) {
          throw new errors.InvalidTarget(
            `this account does not hold the ${requiredRole(refused)} role ${refused.audience} tokens require`,
          );
        }
      }
      return {
        accountId: account.id,
        claims: () => ({
          sub: account.id,
          email: account.email,
          email_verified: account.emailVerified,
          name: account.displayName,
        }),
      };
    },
    extraTokenClaims: async (ctx, token) => {
      const client = ctx.oidc.client;
      const claims: Record<string, unknown> = {
        tjm_authorization_version: tjmMetadata(client).authorization_version ?? 1,
      };
      if (token.kind === "AccessToken") {
        const source = ctx.oidc.entities.AuthorizationCode ?? ctx.oidc.entities.RefreshToken;
        // A code names its session's sid only for clients with back-channel logout; every
        // TJM access token names it, so the Manager can refuse tokens of a session that ended.
        const { sid, sessionUid } = token as { sid?: string; sessionUid?: string };
        const session =
          sid === undefined && sessionUid ? await ctx.oidc.provider.Session.findByUid(sessionUid) : undefined;
        claims.sid = sid ?? (client ? session?.authorizations?.[client.clientId]?.sid : undefined);
        // The Manager refuses the token once its grant is revoked (a replayed code, a reused
        // refresh token, a logout): JWT access tokens cannot be revoked at the provider.
        claims[GRANT_CLAIM] = (token as { grantId?: string }).grantId;
        claims.auth_time = source?.authTime;
        claims.amr = source?.amr;
        claims.acr = source?.acr;
        // The account's roles the client may see: its roles ∩ the client's (client management).
        const accountId = (token as { accountId?: string }).accountId;
        const account = accountId === undefined ? undefined : await findAccount(settings.sql, accountId);
        const allowed = tjmMetadata(client)?.roles ?? [];
        claims[ROLES_CLAIM] = (account?.roles ?? []).filter((role) => allowed.includes(role));
      }
      const audience = (token as { resourceServer?: { audience?: string } }).resourceServer?.audience;
      if (token.kind === "ClientCredentials" && tenant && audience === tenant.audience) {
        claims.tjm_projects = tjmMetadata(client).project_ids ?? [];
      }
      return claims;
    },
    renderError: settings.renderError,
    // oidc-provider's own dispatcher refuses private and loopback addresses (SSRF); a host the
    // operator named is called without it.
    fetch: (input, init) => {
      const host = new URL(input instanceof Request ? input.url : String(input)).hostname.replace(
        /^\[|\]$/g,
        "",
      );
      const trusted = settings.privateNetworkHosts.includes(host.toLowerCase());
      return fetch(input, trusted ? ({ ...init, dispatcher: undefined } as RequestInit) : init);
    },
  };
}

/** Reads the remote address oidc-provider's context holds (for audit rows). */
export function contextAddress(ctx: KoaContextWithOIDC): string | undefined {
  return ctx.ip || undefined;
}

export { Provider };
