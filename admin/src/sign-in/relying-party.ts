/**
 * The console as an OpenID relying party: openid-client 6 does the protocol (discovery, PKCE,
 * the code and refresh grants, the ID token's nonce and issuer), jose checks what openid-client
 * leaves to the client: each access token's audience, and back-channel logout tokens.
 *
 * One sign-in asks for every resource the console can use (RFC 8707: one `resource` parameter
 * each); the provider's grant holds those the account's roles allow. The code is exchanged for
 * the account-portal token, which every enabled account gets, and the refresh token then for
 * each other resource, one `resource` per request: the provider refuses one the account may not
 * hold with `invalid_target`, before it rotates the refresh token. Which tokens the console
 * holds is what the account may do there; the browser is never asked.
 */
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";
import * as oidc from "openid-client";

const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";
/** A logout token older than this is refused; its jti is remembered at least as long. */
export const LOGOUT_TOKEN_MAX_AGE_SECONDS = 120;

export interface RelyingPartyOptions {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The operations audience (OIDC_OPERATIONS_ADMIN_AUDIENCE), as the Manager names it. */
  audience: string;
}

/** The resources the console uses, by what they let an account do here. */
export type ConsoleResource = "account-portal" | "operations" | "admin-console";

/** account-portal first: the code is exchanged for it, since every enabled account may hold it. */
export const CONSOLE_RESOURCES: readonly ConsoleResource[] = [
  "account-portal",
  "operations",
  "admin-console",
];

export interface AccessToken {
  token: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export interface SessionTokens {
  /** One access token per resource the account may use (account-portal for every console sign-in). */
  access: Partial<Record<ConsoleResource, AccessToken>>;
  refreshToken: string | undefined;
  idToken: string | undefined;
}

/** When the first of the session's access tokens expires (milliseconds since the epoch). */
export function firstExpiry(tokens: SessionTokens): number {
  return Math.min(...Object.values(tokens.access).map((access) => access.expiresAt));
}

/** The provider's answer to a token request for a resource the account may not hold. */
function refusedResource(error: unknown): boolean {
  return error instanceof oidc.ResponseBodyError && error.error === "invalid_target";
}

export interface SignedIn {
  tokens: SessionTokens;
  sub: string;
  sid: string | undefined;
}

/** What a sign-in may ask of the provider beyond the defaults (see authorizationRequest). */
export interface Reauthentication {
  maxAge?: number;
  prompt?: "login";
  /** Ask for the second-factor acr as essential (a step-up for OPERATOR_REQUIRE_MFA). */
  stepUp?: boolean;
}

export interface AuthorizationRequest {
  url: URL;
  codeVerifier: string;
  state: string;
  nonce: string;
}

/** The resource indicator (RFC 8707) of an audience, as TJM's provider names it. */
export function resourceIndicator(audience: string): string {
  return /^[a-z][a-z0-9+.-]*:/i.test(audience) && URL.canParse(audience) ? audience : `urn:tjm:${audience}`;
}

/** The built-in provider's acr of a sign-in with a second factor (docs/mfa.md). */
export const MFA_ACR = "urn:tjm:acr:mfa";

export class RelyingParty {
  private configuration: Promise<oidc.Configuration> | undefined;
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  /** Each resource's `aud`, as the provider puts it in the resource's access tokens. */
  private readonly audiences: Record<ConsoleResource, string>;

  constructor(private readonly options: RelyingPartyOptions) {
    this.audiences = {
      "account-portal": "account-portal",
      operations: options.audience,
      "admin-console": "admin-console",
    };
  }

  /** The resource indicator the console asks for `resource` by. */
  indicator(resource: ConsoleResource): string {
    return resourceIndicator(this.audiences[resource]);
  }

  /** Discovery once, retried on the next call after a failure (the provider may start later). */
  private discover(): Promise<oidc.Configuration> {
    this.configuration ??= oidc
      .discovery(
        new URL(this.options.issuer),
        this.options.clientId,
        undefined,
        oidc.ClientSecretBasic(this.options.clientSecret),
        new URL(this.options.issuer).protocol === "http:" ? { execute: [oidc.allowInsecureRequests] } : {},
      )
      .catch((error: unknown) => {
        this.configuration = undefined;
        throw error;
      });
    return this.configuration;
  }

  private async keySet() {
    const metadata = (await this.discover()).serverMetadata();
    this.jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri as string));
    return this.jwks;
  }

  /**
   * `reauthentication` asks the provider for a fresh sign-in (OIDC Core §3.1.2.1): `maxAge`
   * seconds at most since the last one (`max_age`, as a 403 `auth.reauthentication_required`
   * names it), or `prompt=login`, the sign-in page whatever the provider's session says.
   * `stepUp`: the operator's last request was refused for want of a second factor
   * (OPERATOR_REQUIRE_MFA): the acr of a sign-in with one is asked for as essential, which makes
   * the provider ask again for the password and the factor even in a signed-in session (an acr
   * only in acr_values would not).
   */
  async authorizationRequest(
    redirectUri: string,
    reauthentication: Reauthentication = {},
  ): Promise<AuthorizationRequest> {
    const configuration = await this.discover();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const parameters = new URLSearchParams({
      redirect_uri: redirectUri,
      scope: "openid offline_access",
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    for (const resource of CONSOLE_RESOURCES) parameters.append("resource", this.indicator(resource));
    // The ID token names the provider session (sid) whatever the client's back-channel settings:
    // as the sign-out's id_token_hint it is what lets the provider end that session unasked.
    const idTokenClaims: Record<string, unknown> = { sid: null };
    if (reauthentication.stepUp) idTokenClaims.acr = { essential: true, value: MFA_ACR };
    parameters.set("claims", JSON.stringify({ id_token: idTokenClaims }));
    if (reauthentication.maxAge !== undefined) parameters.set("max_age", String(reauthentication.maxAge));
    if (reauthentication.prompt !== undefined) parameters.set("prompt", reauthentication.prompt);
    const url = oidc.buildAuthorizationUrl(configuration, parameters);
    return { url, codeVerifier, state, nonce };
  }

  /**
   * Exchanges the code (state, nonce, PKCE and issuer checked) for the account-portal token, then
   * the refresh token for each other resource the account may hold; every token's audience checked.
   */
  async finishSignIn(
    callbackUrl: URL,
    checks: { codeVerifier: string; state: string; nonce: string },
  ): Promise<SignedIn> {
    const configuration = await this.discover();
    const response = await oidc.authorizationCodeGrant(
      configuration,
      callbackUrl,
      {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      },
      { resource: this.indicator("account-portal") },
    );
    await this.verifyAccessToken(response.access_token, "account-portal");
    const claims = response.claims() as oidc.IDToken;
    let tokens = tokensFrom(response, "account-portal", undefined);
    for (const resource of CONSOLE_RESOURCES.slice(1)) {
      tokens = (await this.refreshFor(tokens, resource)) ?? tokens;
    }
    return {
      tokens,
      sub: claims.sub,
      sid: typeof claims.sid === "string" ? claims.sid : undefined,
    };
  }

  /**
   * A new access token for `resource` with the refresh token; the provider rotates it, so the
   * new one is kept. Undefined when the provider refuses the account that resource now (a role
   * removed): the refresh token stays as it was. Any other refusal throws.
   */
  async refreshFor(tokens: SessionTokens, resource: ConsoleResource): Promise<SessionTokens | undefined> {
    if (tokens.refreshToken === undefined) throw new Error("the session has no refresh token");
    const configuration = await this.discover();
    let response: oidc.TokenEndpointResponse;
    try {
      response = await oidc.refreshTokenGrant(configuration, tokens.refreshToken, {
        resource: this.indicator(resource),
      });
    } catch (error) {
      if (refusedResource(error)) return undefined;
      throw error;
    }
    await this.verifyAccessToken(response.access_token, resource);
    return tokensFrom(response, resource, tokens);
  }

  /**
   * The provider's RP-initiated logout URL, naming the client (client_id) and, when the ended
   * session had one, its ID token as id_token_hint: the provider then ends its session without
   * asking (the hint names it: sid). The browser navigates there, so this is the one token that
   * ever reaches it, and only once its session is over: an ID token is no bearer token for any
   * route (its audience is this client), and the session it names ends with this navigation.
   * Without a hint the provider asks the user to confirm.
   */
  async endSessionUrl(postLogoutRedirectUri: string, idTokenHint: string | undefined): Promise<URL> {
    return oidc.buildEndSessionUrl(await this.discover(), {
      post_logout_redirect_uri: postLogoutRedirectUri,
      ...(idTokenHint === undefined ? {} : { id_token_hint: idTokenHint }),
    });
  }

  private async verifyAccessToken(accessToken: string, resource: ConsoleResource): Promise<void> {
    await jwtVerify(accessToken, await this.keySet(), {
      issuer: (await this.discover()).serverMetadata().issuer,
      audience: this.audiences[resource],
    });
  }

  /**
   * A back-channel logout token (OpenID Connect Back-Channel Logout 1.0 §2.6): signature, iss,
   * aud = this client, recent iat, the logout event, sid or sub, a jti, and no nonce. Whether
   * its jti was seen before is the caller's check.
   */
  async verifyLogoutToken(token: string): Promise<JWTPayload & { jti: string }> {
    const { payload } = await jwtVerify(token, await this.keySet(), {
      issuer: (await this.discover()).serverMetadata().issuer,
      audience: this.options.clientId,
      maxTokenAge: LOGOUT_TOKEN_MAX_AGE_SECONDS,
      requiredClaims: ["iat", "jti"],
    });
    const events = payload.events as Record<string, unknown> | undefined;
    if (typeof events?.[BACKCHANNEL_LOGOUT_EVENT] !== "object") throw new Error("not a logout token");
    if (typeof payload.sid !== "string" && typeof payload.sub !== "string")
      throw new Error("a logout token names a sid or a sub");
    if ("nonce" in payload) throw new Error("a logout token carries no nonce");
    if (typeof payload.jti !== "string") throw new Error("a logout token has a jti");
    return payload as JWTPayload & { jti: string };
  }
}

function tokensFrom(
  response: oidc.TokenEndpointResponse,
  resource: ConsoleResource,
  previous: SessionTokens | undefined,
): SessionTokens {
  return {
    access: {
      ...previous?.access,
      [resource]: {
        token: response.access_token,
        expiresAt: Date.now() + (response.expires_in ?? 300) * 1000,
      },
    },
    refreshToken: response.refresh_token ?? previous?.refreshToken,
    idToken: response.id_token ?? previous?.idToken,
  };
}
