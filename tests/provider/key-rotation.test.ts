/**
 * Signing-key rotation through the real CLI while tokens are in use: the new key is published
 * before any token names it, tokens keep the old key until the new one's signs_from, old tokens
 * stay accepted throughout, and the old key retires only once every token it signed has expired.
 */
import { runScript } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET } from "@tjm/devstack/oidc-issuer";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deriveKey,
  keySetAt,
  loadSigningKeys,
  type Rotation,
  type StoredKey,
} from "../../manager/src/provider/keys.ts";
import {
  clientToken,
  createTestClient,
  resourceIndicator,
  TEST_CLIENT_SECRET_HMAC_KEY,
  TEST_PROVIDER_KEY_ENCRYPTION_KEY,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager, testServices } from "../harness/manager.ts";

const PUBLISH_LEAD_SECONDS = 3;
const ACCESS_TOKEN_TTL_SECONDS = 30;
/** provider/retention.ts: the token lifetime plus a minute for clocks that disagree. */
const RETENTION_MS = (ACCESS_TOKEN_TTL_SECONDS + 60) * 1000;
const PROVIDER_SETTINGS = {
  PROVIDER_KEY_PUBLISH_LEAD_SECONDS: String(PUBLISH_LEAD_SECONDS),
  PROVIDER_KEY_REFRESH_SECONDS: "1",
  PROVIDER_ACCESS_TOKEN_TTL_SECONDS: String(ACCESS_TOKEN_TTL_SECONDS),
};

let manager: TestManager;
/** A client_credentials client for the operations audience: the cheapest way to a fresh token. */
let serviceClient: TestClient;

beforeAll(async () => {
  manager = await TestManager.start({ env: PROVIDER_SETTINGS });
  serviceClient = await createTestClient(manager.sql, {
    resources: [OPERATIONS_AUDIENCE],
    grantTypes: ["client_credentials"],
  });
});
afterAll(() => manager?.close());

/** The CLI's environment: this Manager's database and provider settings. */
function cliEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: testServices().databaseUrl,
    DATABASE_SCHEMA: manager.schema,
    NATS_URL: manager.natsUrl,
    NATS_AUTH: "none",
    OIDC_ISSUER_URL: manager.issuerUrl,
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
    PROVIDER_KEY_ENCRYPTION_KEY: TEST_PROVIDER_KEY_ENCRYPTION_KEY,
    CLIENT_SECRET_HMAC_KEY: TEST_CLIENT_SECRET_HMAC_KEY,
    // Never reached: the command touches only the database.
    S3_ENDPOINT: "http://127.0.0.1:1",
    S3_ACCESS_KEY_ID: "unused",
    S3_SECRET_ACCESS_KEY: "unused",
    ...PROVIDER_SETTINGS,
    ...overrides,
  };
}

async function rotate(): Promise<Rotation> {
  const result = await runScript(["manager", "--", "keys", "rotate"], cliEnv());
  expect(result.code, result.stderr).toBe(0);
  const lines = result.stdout.trim().split("\n");
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? "");
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid as string;

async function publishedKids(): Promise<string[]> {
  const jwks = (await (await fetch(`${manager.issuerUrl}/jwks`)).json()) as { keys: { kid: string }[] };
  return jwks.keys.map((key) => key.kid);
}

function operationsStatus(token: string): Promise<number> {
  return fetch(`${manager.baseUrl}/api/v1/operations/jobs?limit=1`, {
    headers: { authorization: `Bearer ${token}` },
  }).then(async (response) => {
    await response.body?.cancel();
    return response.status;
  });
}

/** Runs `step` every `everyMs` until stopped; a step that throws is recorded, not fatal. */
function repeat(everyMs: number, step: () => Promise<void>) {
  const failures: unknown[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      await step().catch((err: unknown) => failures.push(err));
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    failures,
    async stop() {
      running = false;
      await done;
    },
  };
}

interface IssuedToken {
  kid: string;
  /** When the token request was sent and its answer arrived (epoch ms). */
  requestedAt: number;
  receivedAt: number;
  status: number;
}

describe("keys rotate while tokens are in use", () => {
  it("publishes the new key before it signs, keeps old tokens accepted, and retires the old key after its tokens expire", async () => {
    const oldToken = await manager.operatorToken();
    const oldKid = kidOf(oldToken);
    /** Signed by the old key and first presented only once the new key signs. */
    const heldBack = (
      await clientToken(manager.issuerUrl, serviceClient, resourceIndicator(OPERATIONS_AUDIENCE))
    ).accessToken;
    expect(await publishedKids()).toEqual([oldKid]);

    const firstPublished = new Map<string, number>();
    const publishing = repeat(100, async () => {
      const kids = await publishedKids();
      const seenAt = Date.now();
      for (const kid of kids) if (!firstPublished.has(kid)) firstPublished.set(kid, seenAt);
    });
    const oldTokenStatuses: number[] = [];
    const usingOldToken = repeat(100, async () => {
      oldTokenStatuses.push(await operationsStatus(oldToken));
    });
    const issued: IssuedToken[] = [];
    const gettingFreshTokens = repeat(150, async () => {
      const requestedAt = Date.now();
      const { accessToken } = await clientToken(
        manager.issuerUrl,
        serviceClient,
        resourceIndicator(OPERATIONS_AUDIENCE),
      );
      const receivedAt = Date.now();
      issued.push({
        kid: kidOf(accessToken),
        requestedAt,
        receivedAt,
        status: await operationsStatus(accessToken),
      });
    });
    const loops = [publishing, usingOldToken, gettingFreshTokens];
    let rotation: Rotation;
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      rotation = await rotate();
      expect(rotation).toEqual({
        kid: expect.any(String),
        publishedAt: expect.any(String),
        signsFrom: expect.any(String),
        previous: { kid: oldKid, retiresAt: expect.any(String) },
        deleted: [],
      });
      const signsFrom = Date.parse(rotation.signsFrom);
      expect(signsFrom - Date.parse(rotation.publishedAt)).toBe(PUBLISH_LEAD_SECONDS * 1000);
      expect(Date.parse(rotation.previous?.retiresAt ?? "")).toBe(signsFrom + RETENTION_MS);

      await expect
        .poll(() => issued.some((token) => token.kid === rotation.kid), { timeout: 15_000, interval: 100 })
        .toBe(true);
      // A few more rounds of every loop with the new key signing.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await operationsStatus(heldBack)).toBe(200);
      expect(new Set(await publishedKids())).toEqual(new Set([rotation.kid, oldKid]));
    } finally {
      await Promise.all(loops.map((loop) => loop.stop()));
    }

    for (const loop of loops) expect(loop.failures).toEqual([]);
    expect(oldTokenStatuses.length).toBeGreaterThan(20);
    expect(oldTokenStatuses.filter((status) => status !== 200)).toEqual([]);
    expect(issued.filter((token) => token.status !== 200)).toEqual([]);

    const signsFrom = Date.parse(rotation.signsFrom);
    const withNewKey = issued.filter((token) => token.kid === rotation.kid);
    const firstUse = Math.min(...withNewKey.map((token) => token.requestedAt));
    const appeared = firstPublished.get(rotation.kid) ?? Number.POSITIVE_INFINITY;
    expect(appeared).toBeLessThan(firstUse);
    // Whatever came back before signs_from was signed before it: with the old key.
    expect(Math.min(...withNewKey.map((token) => token.receivedAt))).toBeGreaterThanOrEqual(signsFrom);
    const duringLead = issued.filter(
      (token) => token.requestedAt >= Date.parse(rotation.publishedAt) && token.receivedAt < signsFrom,
    );
    expect(duringLead.length).toBeGreaterThan(0);
    expect(new Set(duringLead.map((token) => token.kid))).toEqual(new Set([oldKid]));
    expect(new Set(issued.map((token) => token.kid))).toEqual(new Set([oldKid, rotation.kid]));

    // Retirement is a function of the stored keys and the clock: the old key stays published
    // until signs_from + retention (90 s, too long to wait) and is retired just after.
    const encryptionKey = deriveKey(TEST_PROVIDER_KEY_ENCRYPTION_KEY, "signing keys");
    const rows = await manager.sql<
      StoredKey[]
    >`select kid, created_at, signs_from from provider_signing_keys`;
    const kids = (keys: StoredKey[]) => keys.map((key) => key.kid);
    const justBefore = keySetAt(rows, new Date(signsFrom + RETENTION_MS - 1), RETENTION_MS);
    expect(justBefore.signing?.kid).toBe(rotation.kid);
    expect(kids(justBefore.published)).toEqual([rotation.kid, oldKid]);
    const justAfter = keySetAt(rows, new Date(signsFrom + RETENTION_MS + 1), RETENTION_MS);
    expect(kids(justAfter.published)).toEqual([rotation.kid]);
    expect(kids(justAfter.retired)).toEqual([oldKid]);
    const loadedNow = await loadSigningKeys(manager.sql, encryptionKey, RETENTION_MS);
    expect(loadedNow.signingKid).toBe(rotation.kid);
    expect(loadedNow.jwks.map((jwk) => jwk.kid)).toEqual([rotation.kid, oldKid]);

    // Later: every stored moment moved back past the retention, as if that time had gone by.
    await manager.sql`
      update provider_signing_keys
      set created_at = created_at - make_interval(secs => ${RETENTION_MS / 1000 + 10}),
        signs_from = signs_from - make_interval(secs => ${RETENTION_MS / 1000 + 10})`;
    const again = await rotate();
    expect(again.deleted).toEqual([oldKid]);
    expect(again.previous?.kid).toBe(rotation.kid);
    expect(
      kids(await manager.sql<StoredKey[]>`select kid from provider_signing_keys order by signs_from`),
    ).toEqual([rotation.kid, again.kid]);
    await expect
      .poll(async () => new Set(await publishedKids()), { timeout: 5000, interval: 100 })
      .toEqual(new Set([rotation.kid, again.kid]));
    const audit = await manager.sql`
      select details from audit_events where event = 'provider.key-rotated' order by id`;
    expect(audit.map((row) => row.details)).toEqual([
      { via: "cli", kid: rotation.kid, previousKid: oldKid, deleted: [] },
      { via: "cli", kid: again.kid, previousKid: rotation.kid, deleted: [oldKid] },
    ]);
  }, 60_000);
});

describe("keys rotate without PROVIDER_KEY_ENCRYPTION_KEY", () => {
  it.each([
    ["the provider enabled", "true", /PROVIDER_KEY_ENCRYPTION_KEY: required when PROVIDER_ENABLED=true/],
    [
      "the provider disabled",
      "false",
      /^keys rotate needs PROVIDER_KEY_ENCRYPTION_KEY, the key the provider's signing keys are stored under$/m,
    ],
  ])("exits 2 naming the setting, with %s, and adds no key", async (_, enabled, message) => {
    const [before] = await manager.sql`select count(*)::int as count from provider_signing_keys`;
    const result = await runScript(
      ["manager", "--", "keys", "rotate"],
      cliEnv({ PROVIDER_KEY_ENCRYPTION_KEY: "", PROVIDER_ENABLED: enabled }),
    );
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
    const [after] = await manager.sql`select count(*)::int as count from provider_signing_keys`;
    expect(after?.count).toBe(before?.count);
  });
});
