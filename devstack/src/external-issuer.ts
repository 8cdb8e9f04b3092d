/**
 * A second, independently configured OpenID provider standing in for an external one (such as
 * Keycloak) in the tests: its own oidc-provider instance, RS256 key, in-memory storage and
 * loopback port, and one confidential client that gets JWT access tokens by client_credentials
 * for any resource indicator it asks for.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import { clientCredentialsToken } from "./oidc-client.ts";

/** 300 s: long enough for any test, short enough that nothing outlives a run. */
const ACCESS_TOKEN_TTL_SECONDS = 300;

export interface ExternalIssuerOptions {
  /** Resource indicator → the `aud` its tokens carry; an indicator not listed is its own audience. */
  audiences?: Record<string, string>;
}

export class ExternalIssuer {
  private constructor(
    readonly issuer: string,
    readonly clientId: string,
    readonly clientSecret: string,
    private readonly server: Server,
  ) {}

  static async start(options: ExternalIssuerOptions = {}): Promise<ExternalIssuer> {
    const audiences = options.audiences ?? {};
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const pair = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
    const kid = await calculateJwkThumbprint(await exportJWK(pair.publicKey));
    const signingKey = { ...(await exportJWK(pair.privateKey)), kid, alg: "RS256", use: "sig" };
    const clientId = `external-client-${randomUUID()}`;
    const clientSecret = randomBytes(32).toString("base64url");

    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          grant_types: ["client_credentials"],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: "client_secret_basic",
        },
      ],
      jwks: { keys: [signingKey] },
      cookies: { keys: [randomBytes(32).toString("base64url")] },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          getResourceServerInfo: (_ctx, resourceIndicator) => ({
            scope: "",
            audience: audiences[resourceIndicator] ?? resourceIndicator,
            accessTokenFormat: "jwt",
            accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
            jwt: { sign: { alg: "RS256" } },
          }),
        },
      },
      ttl: { AccessToken: ACCESS_TOKEN_TTL_SECONDS, ClientCredentials: ACCESS_TOKEN_TTL_SECONDS },
    });
    server.on("request", provider.callback());
    return new ExternalIssuer(issuer, clientId, clientSecret, server);
  }

  /** A JWT access token for `resourceIndicator`, by client_credentials at the token endpoint. */
  async token(resourceIndicator: string): Promise<string> {
    const { accessToken } = await clientCredentialsToken({
      issuer: this.issuer,
      clientId: this.clientId,
      clientSecret: this.clientSecret,
      resource: resourceIndicator,
    });
    return accessToken;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve, reject) =>
      this.server.close((error) => (error ? reject(error) : resolve())),
    );
  }
}
