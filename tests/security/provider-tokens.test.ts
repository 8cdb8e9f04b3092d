/**
 * The Manager's bearer checks with tokens of the built-in provider: every bad token and every
 * revocation (disabled account or client, tokens_valid_after, a removed operator role, an
 * authorization-version bump) refused on the next request on every replica, and the external
 * operator issuer trusted for operations only.
 */
import { ExternalIssuer } from "@tjm/devstack/external-issuer";
import { OAuthError } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE, TENANT_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { exportSPKI, generateKeyPair, importJWK, type JWK, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { deriveKey, loadSigningKeys } from "../../manager/src/provider/keys.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  TEST_PROVIDER_KEY_ENCRYPTION_KEY,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

let manager: TestManager;
/** A second replica on the same schema that trusts the first one's provider. */
let replica: TestManager;
let projectId: string;

beforeAll(async () => {
  manager = await TestManager.start();
  replica = await TestManager.start({ schema: manager.schema, issuerUrl: manager.issuerUrl });
  ({ projectId } = await manager.createProject());
});
afterAll(async () => {
  await replica?.close({ keepStreams: true });
  await manager?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function callOperations(target: TestManager, token: string): Promise<Response> {
  return fetch(`${target.baseUrl}/api/v1/operations/jobs?limit=1`, { headers: bearer(token) });
}

/** The tenant resume-uploads route; its checks of the token come before any job is looked up. */
function callTenant(target: TestManager, token: string): Promise<Response> {
  const path = `/api/v1/projects/${projectId}/jobs/${crypto.randomUUID()}/resume-uploads`;
  return fetch(`${target.baseUrl}${path}`, { method: "POST", headers: bearer(token) });
}

/** The answer's status, and for a refusal the reason its message must give. */
async function expectAnswer(response: Response, status: number, reason?: RegExp): Promise<void> {
  const body = await response.text();
  expect(response.status, body).toBe(status);
  if (reason) expect(JSON.parse(body).message).toMatch(reason);
}

/** A token, or one minted per replica (each replica's harness issuer is its own). */
type TokenFor = string | ((target: TestManager) => string | Promise<string>);

async function expectOnEveryReplica(token: TokenFor, status: number, reason?: RegExp): Promise<void> {
  for (const target of [manager, replica]) {
    const presented = typeof token === "string" ? token : await token(target);
    await expectAnswer(await callOperations(target, presented), status, reason);
  }
}

interface SignedIn {
  account: TestAccount;
  client: TestClient;
  token: string;
}

/** An account that signs in through the provider for `audience` (an operator, unless roles say otherwise). */
async function signedIn(
  options: { audience?: string; roles?: ("operator" | "client-admin")[] } = {},
): Promise<SignedIn> {
  const audience = options.audience ?? OPERATIONS_AUDIENCE;
  const account = await createTestAccount(manager.sql, { roles: options.roles ?? ["operator"] });
  const client = await createTestClient(manager.sql, { resources: [audience] });
  const tokens = await signInAs(manager.issuerUrl, client, account, resourceIndicator(audience));
  return { account, client, token: tokens.accessToken };
}

async function signInAgain({ account, client }: SignedIn): Promise<string> {
  const tokens = await signInAs(manager.issuerUrl, client, account, resourceIndicator(OPERATIONS_AUDIENCE));
  return tokens.accessToken;
}

const epochNow = () => Math.floor(Date.now() / 1000);

/** Claims a TJM operations token carries; only the signature or the header makes the tokens below bad. */
function tjmOperationsClaims(subject: SignedIn, overrides: JWTPayload = {}): JWTPayload {
  return {
    iss: manager.issuerUrl,
    sub: subject.account.accountId,
    aud: OPERATIONS_AUDIENCE,
    client_id: subject.client.clientId,
    tjm_authorization_version: 1,
    iat: epochNow(),
    exp: epochNow() + 300,
    ...overrides,
  };
}

/** The algorithm-confusion attack: an HMAC keyed with bytes of the provider's published RSA key. */
async function hs256KeyedWithProviderKey(subject: SignedIn, form: "PEM" | "JWK"): Promise<string> {
  const jwks = (await (await fetch(`${manager.issuerUrl}/jwks`)).json()) as { keys: JWK[] };
  const [published] = jwks.keys;
  if (!published) throw new Error("the provider publishes no key");
  const secret =
    form === "PEM"
      ? await exportSPKI((await importJWK(published, "RS256")) as CryptoKey)
      : JSON.stringify(published);
  return new SignJWT(tjmOperationsClaims(subject))
    .setProtectedHeader({ alg: "HS256", kid: published.kid })
    .sign(new TextEncoder().encode(secret));
}

describe("tokens the Manager refuses outright", () => {
  /** Whose claims the forged tokens below carry: an operator whose real tokens are accepted. */
  let subject: SignedIn;
  beforeAll(async () => {
    subject = await signedIn();
  });

  it("accepts the operator's own provider token on every replica (the baseline of the refusals)", async () => {
    await expectOnEveryReplica(subject.token, 200);
  });

  it("answers 403 to a provider token for account-portal on an operations route", async () => {
    const { token } = await signedIn({ audience: ACCOUNT_PORTAL_AUDIENCE });
    await expectOnEveryReplica(token, 403, /audience does not include tjm-operations/);
  });

  it("answers 401 to a token of an external issuer the configuration does not name", async () => {
    const stranger = await ExternalIssuer.start({
      audiences: { [resourceIndicator(OPERATIONS_AUDIENCE)]: OPERATIONS_AUDIENCE },
    });
    try {
      const token = await stranger.token(resourceIndicator(OPERATIONS_AUDIENCE));
      await expectOnEveryReplica(token, 401, /the issuer http:\/\/127\.0\.0\.1:\d+ is not trusted/);
    } finally {
      await stranger.close();
    }
  });

  it("answers 401 to an expired token (the harness key and the provider's own key)", async () => {
    await expectOnEveryReplica((target) => target.issuer.token({ expiresInSeconds: -60 }), 401, /expired/);
    const keys = await loadSigningKeys(
      manager.sql,
      deriveKey(TEST_PROVIDER_KEY_ENCRYPTION_KEY, "signing keys"),
      60_000,
    );
    const [signing] = keys.jwks;
    if (!signing) throw new Error("the provider has no signing key");
    const expired = await new SignJWT(
      tjmOperationsClaims(subject, { iat: epochNow() - 600, exp: epochNow() - 60 }),
    )
      .setProtectedHeader({ alg: "RS256", kid: signing.kid })
      .sign(await importJWK(signing, "RS256"));
    await expectOnEveryReplica(expired, 401, /expired/);
  });

  it("answers 401 to an unsigned alg:none token", async () => {
    await expectOnEveryReplica((target) => target.issuer.unsignedToken(), 401, /algorithm/);
  });

  it("answers 401 to a token signed by a key the issuer never published", async () => {
    await expectOnEveryReplica(
      (target) => target.issuer.tokenSignedByStranger(),
      401,
      /signature verification failed/,
    );
    const { privateKey } = await generateKeyPair("RS256");
    const unknownKid = await new SignJWT(tjmOperationsClaims(subject))
      .setProtectedHeader({ alg: "RS256", kid: "a-key-the-provider-never-published" })
      .sign(privateKey);
    await expectOnEveryReplica(unknownKid, 401, /no key of the issuer matches/);
  });

  it.each(["PEM", "JWK"] as const)(
    "answers 401 to an HS256 token keyed with the provider's public key as %s",
    async (form) => {
      await expectOnEveryReplica(await hs256KeyedWithProviderKey(subject, form), 401, /algorithm/);
    },
  );
});

describe("revocations, refused on the next request on every replica", () => {
  it("a token of an account disabled after it was issued", async () => {
    const subject = await signedIn();
    await expectOnEveryReplica(subject.token, 200);
    await manager.sql`update accounts set disabled_at = now() where id = ${subject.account.accountId}`;
    await expectOnEveryReplica(subject.token, 401, /account is disabled/);
  });

  it("a token issued before tokens_valid_after; one issued after its second is accepted", async () => {
    const subject = await signedIn();
    await expectOnEveryReplica(subject.token, 200);
    const [revoked] = await manager.sql<{ at: number }[]>`
      update accounts set tokens_valid_after = now() where id = ${subject.account.accountId}
      returning extract(epoch from tokens_valid_after)::float8 as at`;
    await expectOnEveryReplica(subject.token, 401, /issued before its account's tokens were revoked/);
    // iat is in whole seconds and a token of the revocation's own second is refused: sign in
    // again once the clock is past the next whole second.
    const acceptedFrom = (Math.floor(revoked?.at ?? 0) + 2) * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, acceptedFrom - Date.now())));
    await expectOnEveryReplica(await signInAgain(subject), 200);
  });

  it("an operations token of an account whose operator role was removed gets 403", async () => {
    const subject = await signedIn();
    await expectOnEveryReplica(subject.token, 200);
    await manager.sql`
      delete from account_roles where account_id = ${subject.account.accountId} and role = 'operator'`;
    await expectOnEveryReplica(subject.token, 403, /does not hold the operator role/);
  });

  it("a token of an older authorization version; a token issued after the bump is accepted", async () => {
    const subject = await signedIn();
    await expectOnEveryReplica(subject.token, 200);
    await manager.sql`
      update oauth_clients set authorization_version = authorization_version + 1
      where client_id = ${subject.client.clientId}`;
    await expectOnEveryReplica(subject.token, 401, /older authorization version/);
    await expectOnEveryReplica(await signInAgain(subject), 200);
  });

  it("a token of a client disabled after it was issued", async () => {
    const subject = await signedIn();
    await expectOnEveryReplica(subject.token, 200);
    await manager.sql`update oauth_clients set disabled_at = now() where client_id = ${subject.client.clientId}`;
    await expectOnEveryReplica(subject.token, 401, /client is disabled/);
  });
});

describe("sign-in for the operations audience", () => {
  it("ends with access_denied for an account without the operator role", async () => {
    const failure = await signedIn({ roles: ["client-admin"] }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OAuthError);
    expect((failure as OAuthError).code).toBe("access_denied");
  });
});

describe("an external operator issuer (a second, independently configured provider)", () => {
  let external: ExternalIssuer;
  /** Names `external` as its external operator issuer. */
  let trusting: TestManager;
  /** Names no external issuer at all. */
  let untrusting: TestManager;

  beforeAll(async () => {
    external = await ExternalIssuer.start({
      audiences: Object.fromEntries(
        [OPERATIONS_AUDIENCE, TENANT_AUDIENCE, ACCOUNT_PORTAL_AUDIENCE].map((audience) => [
          resourceIndicator(audience),
          audience,
        ]),
      ),
    });
    trusting = await TestManager.start({ externalOperatorIssuer: external.issuer });
    untrusting = await TestManager.start({ externalOperatorIssuer: null });
  });
  afterAll(async () => {
    await trusting?.close();
    await untrusting?.close();
    await external?.close();
  });

  const externalToken = (audience: string) => external.token(resourceIndicator(audience));

  it("its operations tokens are accepted on an operations route", async () => {
    await expectAnswer(await callOperations(trusting, await externalToken(OPERATIONS_AUDIENCE)), 200);
  });

  it("its tokens are refused with 401 on the tenant route, whatever their audience", async () => {
    for (const audience of [TENANT_AUDIENCE, OPERATIONS_AUDIENCE]) {
      await expectAnswer(
        await callTenant(trusting, await externalToken(audience)),
        401,
        /trusted for the operations audience only/,
      );
    }
  });

  it("its token for another audience gets 403 on an operations route", async () => {
    await expectAnswer(
      await callOperations(trusting, await externalToken(ACCOUNT_PORTAL_AUDIENCE)),
      403,
      /audience does not include/,
    );
  });

  it("a Manager whose configuration names no external issuer refuses its tokens with 401", async () => {
    await expectAnswer(
      await callOperations(untrusting, await externalToken(OPERATIONS_AUDIENCE)),
      401,
      /is not trusted/,
    );
  });
});
