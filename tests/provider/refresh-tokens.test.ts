/**
 * Refresh tokens of the built-in provider (issue 12): every refresh rotates the token, a
 * rotated token used again revokes the whole grant (and is audited), rotation never extends the
 * chain's absolute lifetime, and a disabled account can neither refresh nor sign in.
 */
import { OAuthError, refresh, startAuthorization } from "@tjm/devstack/oidc-client";
import { waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";
import { postSignInForm } from "./provider-requests.ts";

const RESOURCE = resourceIndicator(ACCOUNT_PORTAL_AUDIENCE);
const LIFETIME_SECONDS = 3600;

let manager: TestManager;
let client: TestClient;

beforeAll(async () => {
  manager = await TestManager.start({
    env: { PROVIDER_REFRESH_TOKEN_LIFETIME_SECONDS: String(LIFETIME_SECONDS) },
  });
  client = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE] });
});
afterAll(() => manager?.close());

async function signedIn(account?: TestAccount) {
  const signingIn = account ?? (await createTestAccount(manager.sql));
  const tokens = await signInAs(manager.issuerUrl, client, signingIn, RESOURCE);
  if (tokens.refreshToken === undefined) throw new Error("the sign-in returned no refresh token");
  return { account: signingIn, refreshToken: tokens.refreshToken };
}

function refreshWith(refreshToken: string) {
  return refresh({ issuer: manager.issuerUrl, clientId: client.clientId, refreshToken, resource: RESOURCE });
}

async function refreshed(refreshToken: string): Promise<string> {
  const tokens = await refreshWith(refreshToken);
  if (tokens.refreshToken === undefined) throw new Error("the refresh returned no refresh token");
  return tokens.refreshToken;
}

async function refusal(refreshToken: string): Promise<unknown> {
  return refreshWith(refreshToken).then(
    () => new Error("the refresh was accepted"),
    (err: unknown) => err,
  );
}

interface StoredRefreshToken {
  grantId: string;
  /** Epoch seconds, from the payload. */
  exp: number;
  /** Seconds from the database's now until the record is no longer found. */
  expiresIn: number;
}

async function stored(refreshToken: string): Promise<StoredRefreshToken | undefined> {
  const [row] = await manager.sql<StoredRefreshToken[]>`
    select payload->>'grantId' as grant_id, (payload->>'exp')::bigint::float8 as exp,
      extract(epoch from expires_at - now())::float8 as expires_in
    from oidc_records where model = 'RefreshToken' and id = ${refreshToken}`;
  return row;
}

/** As if `seconds` of the chain's lifetime had passed: its end moves that much closer. */
async function agePast(refreshToken: string, seconds: number): Promise<void> {
  await manager.sql`
    update oidc_records
    set payload = jsonb_set(payload, '{exp}', to_jsonb((payload->>'exp')::bigint - ${seconds})),
      expires_at = expires_at - make_interval(secs => ${seconds})
    where model = 'RefreshToken' and id = ${refreshToken}`;
}

describe("rotation", () => {
  it("hands out a new refresh token with every refresh", async () => {
    const { refreshToken: first } = await signedIn();
    const second = await refreshed(first);
    const third = await refreshed(second);
    expect(new Set([first, second, third]).size).toBe(3);
    expect((await refreshWith(third)).claims).toMatchObject({ aud: ACCOUNT_PORTAL_AUDIENCE });
  });

  it("lets one of several concurrent refreshes with one token through, at most", async () => {
    const { refreshToken } = await signedIn();
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => refreshWith(refreshToken)));
    expect(results.filter((result) => result.status === "fulfilled").length).toBeLessThanOrEqual(1);
    for (const result of results) {
      if (result.status === "rejected") expect(result.reason).toMatchObject({ code: "invalid_grant" });
    }
  });
});

describe("reuse of a rotated refresh token", () => {
  it("is refused and revokes the grant: the newest token stops working too", async () => {
    const { account, refreshToken: first } = await signedIn();
    const grantId = (await stored(first))?.grantId as string;
    const second = await refreshed(first);
    const third = await refreshed(second);

    expect(await refusal(first)).toMatchObject({ code: "invalid_grant" });
    expect(await refusal(third)).toMatchObject({ code: "invalid_grant" });
    expect(await manager.sql`select model from oidc_records where grant_id = ${grantId}`).toEqual([]);

    await waitFor("the reuse's audit row", async () => {
      const rows = await manager.sql`
        select result, client_id, details from audit_events
        where event = 'auth.refresh-token-reuse' and actor_account_id = ${account.accountId}`;
      if (rows.length === 0) return false;
      expect(rows).toEqual([
        { result: "failure", clientId: client.clientId, details: { grantRevoked: true } },
      ]);
      return true;
    });
  });
});

describe("absolute lifetime", () => {
  it("ends the chain when the first token would have ended, however often it is rotated", async () => {
    const { refreshToken: first } = await signedIn();
    const original = (await stored(first)) as StoredRefreshToken;
    expect(original.expiresIn).toBeGreaterThan(LIFETIME_SECONDS - 10);
    expect(original.expiresIn).toBeLessThanOrEqual(LIFETIME_SECONDS);

    // Late in its life: a rotation that started a fresh lifetime would show 3000 s more.
    await agePast(first, 3000);
    const aged = (await stored(first)) as StoredRefreshToken;
    const second = await refreshed(first);
    const rotated = (await stored(second)) as StoredRefreshToken;
    expect(rotated.exp - aged.exp).toBeGreaterThanOrEqual(0);
    // The second the rotation ran in may tick over between reading the rest and stamping.
    expect(rotated.exp - aged.exp).toBeLessThanOrEqual(1);
    expect(Math.abs(rotated.expiresIn - aged.expiresIn)).toBeLessThan(2);

    const third = await refreshed(second);
    expect((await stored(third))?.exp).toBeLessThanOrEqual(aged.exp + 1);

    // The end reached: the last token of the chain is refused.
    await agePast(third, Math.ceil((await stored(third))?.expiresIn as number));
    expect(await refusal(third)).toMatchObject({ code: "invalid_grant" });
  });
});

describe("a disabled account", () => {
  it("can no longer refresh", async () => {
    const { account, refreshToken } = await signedIn();
    await manager.sql`update accounts set disabled_at = now() where id = ${account.accountId}`;
    const refused = await refusal(refreshToken);
    expect(refused).toBeInstanceOf(OAuthError);
    expect(refused).toMatchObject({ code: "invalid_grant" });
  });

  it("cannot sign in, and is told exactly what a wrong password is told", async () => {
    const disabled = await createTestAccount(manager.sql);
    await manager.sql`update accounts set disabled_at = now() where id = ${disabled.accountId}`;
    const enabled = await createTestAccount(manager.sql);
    const attempt = async (email: string, password: string) =>
      postSignInForm(
        await startAuthorization({
          issuer: manager.issuerUrl,
          clientId: client.clientId,
          redirectUri: client.redirectUri,
          resource: RESOURCE,
        }),
        { email, password },
      );

    const refusedDisabled = await attempt(disabled.email, disabled.password);
    const wrongPassword = await attempt(enabled.email, `${enabled.password}!`);
    expect(refusedDisabled.location).toBeNull();
    expect(refusedDisabled.status).toBe(wrongPassword.status);
    expect(refusedDisabled.alert).toBeDefined();
    expect(refusedDisabled.alert).toBe(wrongPassword.alert);

    const [row] = await manager.sql`
      select result, details from audit_events
      where event = 'auth.sign-in' and actor_account_id = ${disabled.accountId}`;
    expect(row).toEqual({ result: "failure", details: { reason: "account-disabled" } });
  });
});

describe("revocation", () => {
  it("lets a client revoke its own refresh token and ignores another client's attempt", async () => {
    const { refreshToken } = await signedIn();
    const other = await createTestClient(manager.sql, {
      resources: [ACCOUNT_PORTAL_AUDIENCE],
      grantTypes: ["client_credentials"],
    });
    const revoke = (by: { clientId: string; clientSecret?: string | undefined }) =>
      fetch(`${manager.issuerUrl}/token/revocation`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          ...(by.clientSecret ? { authorization: `Basic ${btoa(`${by.clientId}:${by.clientSecret}`)}` } : {}),
        },
        body: new URLSearchParams({
          token: refreshToken,
          token_type_hint: "refresh_token",
          ...(by.clientSecret ? {} : { client_id: by.clientId }),
        }),
      });

    // Another client's request is answered like any (RFC 7009) and changes nothing.
    const stranger = await revoke(other);
    expect(stranger.status).toBe(200);
    expect(await stored(refreshToken)).toBeDefined();

    const own = await revoke(client);
    expect(own.status).toBe(200);
    expect(await stored(refreshToken)).toBeUndefined();
    expect(await refusal(refreshToken)).toMatchObject({ code: "invalid_grant" });
  });
});
