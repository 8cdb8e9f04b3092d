/**
 * A local identity provider for the tests, the demo and the bench: its own RS256 key pair, an
 * OIDC discovery document and a JWKS served on loopback, and helpers that mint good and
 * deliberately bad tokens.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";

export const OPERATIONS_AUDIENCE = "tjm-operations";
export const TENANT_AUDIENCE = "tjm-api";
/** The enrollment HMAC key every test Manager uses (tests only; real ones come from the environment). */
export const TEST_ENROLLMENT_SECRET = "test-enrollment-secret-0123456789abcdef";

export interface TokenOptions {
  audience?: string | string[];
  subject?: string;
  expiresInSeconds?: number;
  /** Leaves out `exp` entirely, for tests of a token that never expires. */
  omitExpiry?: boolean;
  notBeforeSeconds?: number;
  issuer?: string;
  claims?: JWTPayload;
}

export class TestIssuer {
  private constructor(
    readonly issuer: string,
    private readonly server: Server,
    private readonly privateKey: CryptoKey,
    private readonly strangerKey: CryptoKey,
  ) {}

  static async start(): Promise<TestIssuer> {
    const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
    const stranger = await generateKeyPair("RS256", { extractable: true });
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "test-key", alg: "RS256", use: "sig" };
    let issuer = "";
    const server = createServer((req, res) => {
      if (req.url === "/.well-known/openid-configuration") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
      } else if (req.url === "/jwks") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ keys: [jwk] }));
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return new TestIssuer(issuer, server, privateKey, stranger.privateKey);
  }

  private sign(key: CryptoKey, options: TokenOptions): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT({ ...options.claims })
      .setProtectedHeader({ alg: "RS256", kid: "test-key", typ: "JWT" })
      .setIssuer(options.issuer ?? this.issuer)
      .setSubject(options.subject ?? "operator@example.com")
      .setAudience(options.audience ?? [OPERATIONS_AUDIENCE])
      .setIssuedAt(now);
    if (!options.omitExpiry) jwt.setExpirationTime(now + (options.expiresInSeconds ?? 600));
    if (options.notBeforeSeconds !== undefined) jwt.setNotBefore(now + options.notBeforeSeconds);
    return jwt.sign(key);
  }

  /** A valid operator token (override any claim to make it less so). */
  token(options: TokenOptions = {}): Promise<string> {
    return this.sign(this.privateKey, options);
  }

  /** Well-formed and unexpired, but signed by a key the issuer never published. */
  tokenSignedByStranger(options: TokenOptions = {}): Promise<string> {
    return this.sign(this.strangerKey, options);
  }

  /** An unsigned token (`alg: none`) with otherwise perfect claims. */
  unsignedToken(): string {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    return `${encode({ alg: "none", typ: "JWT" })}.${encode({ iss: this.issuer, sub: "x", aud: [OPERATIONS_AUDIENCE], exp: now + 600 })}.`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
