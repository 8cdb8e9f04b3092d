import { ExternalIssuer } from "@tjm/devstack/external-issuer";
import { clientCredentialsToken, OAuthError } from "@tjm/devstack/oidc-client";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const MAPPED_RESOURCE = "https://tjm.example.test/api";
const MAPPED_AUDIENCE = "tjm-api";

let external: ExternalIssuer;
let jwks: ReturnType<typeof createRemoteJWKSet>;

beforeAll(async () => {
  external = await ExternalIssuer.start({ audiences: { [MAPPED_RESOURCE]: MAPPED_AUDIENCE } });
  const discovery = await fetch(`${external.issuer}/.well-known/openid-configuration`);
  const metadata = (await discovery.json()) as { issuer: string; jwks_uri: string };
  expect(metadata.issuer).toBe(external.issuer);
  jwks = createRemoteJWKSet(new URL(metadata.jwks_uri));
});
afterAll(() => external?.close());

describe("ExternalIssuer", () => {
  it("issues an RS256 JWT for a mapped resource indicator, with the mapped audience, that its JWKS verifies", async () => {
    const token = await external.token(MAPPED_RESOURCE);
    expect(decodeProtectedHeader(token).alg).toBe("RS256");
    const { payload } = await jwtVerify(token, jwks, {
      issuer: external.issuer,
      audience: MAPPED_AUDIENCE,
      algorithms: ["RS256"],
    });
    expect(payload.client_id).toBe(external.clientId);
    expect((payload.exp as number) - (payload.iat as number)).toBe(300);
  });

  it("makes an unmapped resource indicator its own audience", async () => {
    const resource = "https://elsewhere.example.test/operations";
    const { payload } = await jwtVerify(await external.token(resource), jwks, {
      issuer: external.issuer,
      audience: resource,
      algorithms: ["RS256"],
    });
    expect(payload.aud).toBe(resource);
  });

  it("is independent of another instance: its own client, key and issuer", async () => {
    const other = await ExternalIssuer.start();
    try {
      expect(other.issuer).not.toBe(external.issuer);
      expect(other.clientId).not.toBe(external.clientId);
      await expect(jwtVerify(await other.token(MAPPED_RESOURCE), jwks)).rejects.toThrow();
    } finally {
      await other.close();
    }
  });

  it("refuses a wrong client secret with invalid_client", async () => {
    const refused = clientCredentialsToken({
      issuer: external.issuer,
      clientId: external.clientId,
      clientSecret: "not-the-secret",
      resource: MAPPED_RESOURCE,
    });
    await expect(refused).rejects.toBeInstanceOf(OAuthError);
    await expect(refused).rejects.toMatchObject({ code: "invalid_client", status: 401 });
  });

  it("refuses a resource indicator that is not an absolute URI with invalid_target", async () => {
    await expect(external.token("not-a-uri")).rejects.toMatchObject({ code: "invalid_target" });
  });
});
