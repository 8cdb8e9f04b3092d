/**
 * The console as an OpenID relying party: openid-client 6 does the protocol (discovery, PKCE,
 * the code and refresh grants, the ID token's nonce and issuer), jose checks what openid-client
 * leaves to the client: the access token's audience, and back-channel logout tokens.
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
  /** The operations audience: the `aud` every access token the console keeps must name. */
  audience: string;
}

export interface SessionTokens {
  accessToken: string;
  refreshToken: string | undefined;
  idToken: string | undefined;
  /** Milliseconds since the epoch. */
  accessExpiresAt: number;
}

export interface SignedIn {
  tokens: SessionTokens;
  sub: string;
  sid: string | undefined;
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

export class RelyingParty {
  private configuration: Promise<oidc.Configuration> | undefined;
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  readonly resource: string;

  constructor(private readonly options: RelyingPartyOptions) {
    this.resource = resourceIndicator(options.audience);
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

  async authorizationRequest(redirectUri: string): Promise<AuthorizationRequest> {
    const configuration = await this.discover();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: "openid offline_access",
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
      resource: this.resource,
    });
    return { url, codeVerifier, state, nonce };
  }

  /** Exchanges the code (state, nonce, PKCE and issuer checked), then checks the access token's audience. */
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
      { resource: this.resource },
    );
    await this.verifyAccessToken(response.access_token);
    const claims = response.claims() as oidc.IDToken;
    return {
      tokens: tokensFrom(response, undefined),
      sub: claims.sub,
      sid: typeof claims.sid === "string" ? claims.sid : undefined,
    };
  }

  /** A new access token with the refresh token; the provider rotates it, so the new one is kept. */
  async refresh(tokens: SessionTokens): Promise<SessionTokens> {
    if (tokens.refreshToken === undefined) throw new Error("the session has no refresh token");
    const configuration = await this.discover();
    const response = await oidc.refreshTokenGrant(configuration, tokens.refreshToken, {
      resource: this.resource,
    });
    await this.verifyAccessToken(response.access_token);
    return tokensFrom(response, tokens);
  }

  /**
   * The provider's RP-initiated logout URL, naming the client (client_id) but without an
   * id_token_hint: the browser navigates there, and no token may ever reach it. The provider
   * asks the user to confirm either way.
   */
  async endSessionUrl(postLogoutRedirectUri: string): Promise<URL> {
    return oidc.buildEndSessionUrl(await this.discover(), {
      post_logout_redirect_uri: postLogoutRedirectUri,
    });
  }

  private async verifyAccessToken(accessToken: string): Promise<void> {
    await jwtVerify(accessToken, await this.keySet(), {
      issuer: (await this.discover()).serverMetadata().issuer,
      audience: this.options.audience,
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
  previous: SessionTokens | undefined,
): SessionTokens {
  return {
    accessToken: response.access_token,
    refreshToken: response.refresh_token ?? previous?.refreshToken,
    idToken: response.id_token ?? previous?.idToken,
    accessExpiresAt: Date.now() + (response.expires_in ?? 300) * 1000,
  };
}
