/**
 * `POST /api/v1/operations/token-standings`: a relay that follows the event stream once for many
 * signed-in operators (the Admin console) asks here whether each of their tokens still stands.
 * Each token is judged as an operations route would judge it as a bearer token, answers come in
 * the order asked, and a hundred tokens are one request.
 */
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { disableAccount } from "../../manager/src/identity/accounts/index.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

const PATH = "/api/v1/operations/token-standings";

let manager: TestManager;
/** One first-party client for the operations audience, shared by every signed-in account. */
let client: TestClient;
beforeAll(async () => {
  manager = await TestManager.start();
  client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
});
afterAll(() => manager?.close());

async function signedIn(): Promise<{ account: TestAccount; token: string }> {
  const account = await createTestAccount(manager.sql, { roles: ["operator"] });
  const { accessToken } = await signInAs(
    manager.issuerUrl,
    client,
    account,
    resourceIndicator(OPERATIONS_AUDIENCE),
  );
  return { account, token: accessToken };
}

/** Asks with the harness's operator token unless `authorization` is given ("" for none). */
async function ask(body: unknown, authorization?: string): Promise<Response> {
  const headers = new Headers({ "content-type": "application/json" });
  if (authorization !== "")
    headers.set("authorization", authorization ?? `Bearer ${await manager.operatorToken()}`);
  return fetch(`${manager.baseUrl}${PATH}`, { method: "POST", headers, body: JSON.stringify(body) });
}

interface Judged {
  stands: boolean;
  status?: 401 | 403;
  reason?: string;
}

async function standingsOf(accessTokens: string[]): Promise<Judged[]> {
  const response = await ask({ accessTokens });
  expect(response.status).toBe(200);
  const { standings } = (await response.json()) as { standings: Judged[] };
  expect(standings).toHaveLength(accessTokens.length);
  return standings;
}

/** The same token with one character in the middle of its signature changed. */
function withForgedSignature(token: string): string {
  const [header, payload, signature = ""] = token.split(".");
  // Not the last character: its low bits are padding, and changing them may decode to the same bytes.
  const at = Math.floor(signature.length / 2);
  const flipped = signature[at] === "A" ? "B" : "A";
  return `${header}.${payload}.${signature.slice(0, at)}${flipped}${signature.slice(at + 1)}`;
}

async function expectValidationError(response: Response, path: string): Promise<void> {
  expect(response.status).toBe(400);
  const body = (await response.json()) as { details: { path: string }[] };
  expect(body.details.map((detail) => detail.path)).toContain(path);
}

describe("POST /api/v1/operations/token-standings", () => {
  it("refuses the caller as any operations route does: no bearer 401, a tenant token 403", async () => {
    const body = { accessTokens: ["x"] };
    expect((await ask(body, "")).status).toBe(401);

    const tenant = `Bearer ${await manager.tenantToken([])}`;
    const jobs = await fetch(`${manager.baseUrl}/api/v1/operations/jobs`, {
      headers: { authorization: tenant },
    });
    await jobs.body?.cancel();
    const refused = await ask(body, tenant);
    expect(refused.status).toBe(403);
    expect(refused.status).toBe(jobs.status);
    expect(((await refused.json()) as { message: string }).message).toMatch(/audience/);
  });

  it("judges a mixed batch token by token, in the order asked", async () => {
    const standing = await signedIn();
    const disabled = await signedIn();
    await disableAccount(manager.sql, disabled.account.email);
    // The provider issues operations tokens to operators only: the role goes after sign-in.
    const notOperator = await signedIn();
    await manager.sql`delete from account_roles where account_id = ${notOperator.account.accountId}`;
    const tenant = await manager.tenantToken([]);
    // An external operator issuer's token: expiry is checked where every issuer's signature is.
    const expired = await manager.issuer.token({ expiresInSeconds: -60 });

    const standings = await standingsOf([
      standing.token,
      disabled.token,
      notOperator.token,
      "not a token",
      withForgedSignature(standing.token),
      expired,
      tenant,
      standing.token,
    ]);
    expect(standings[0]).toEqual({ stands: true });
    expect(standings[1]).toMatchObject({
      stands: false,
      status: 401,
      reason: expect.stringMatching(/disabled/),
    });
    expect(standings[2]).toMatchObject({
      stands: false,
      status: 403,
      reason: expect.stringMatching(/operator role/),
    });
    expect(standings[3]).toMatchObject({
      stands: false,
      status: 401,
      reason: expect.stringMatching(/malformed/),
    });
    expect(standings[4]).toMatchObject({
      stands: false,
      status: 401,
      reason: expect.stringMatching(/signature/),
    });
    expect(standings[5]).toMatchObject({
      stands: false,
      status: 401,
      reason: expect.stringMatching(/expired/),
    });
    expect(standings[6]).toMatchObject({
      stands: false,
      status: 403,
      reason: expect.stringMatching(/audience/),
    });
    expect(standings[7]).toEqual({ stands: true });
  });

  it("refuses 0 tokens, 101 tokens and a token longer than 8192 characters with 400", async () => {
    await expectValidationError(await ask({ accessTokens: [] }), "accessTokens");
    await expectValidationError(
      await ask({ accessTokens: Array.from({ length: 101 }, () => "x") }),
      "accessTokens",
    );
    await expectValidationError(await ask({ accessTokens: ["x".repeat(8193)] }), "accessTokens.0");
  });

  it("answers 100 tokens in one request, each judged by its own account", async () => {
    // 100 sign-ins took 54 s here (argon2id at the provider): 10 accounts, each asked for 10 times,
    // interleaved, so both distinct rows and tokens sharing one are mapped back to their places.
    const accounts = await Promise.all(Array.from({ length: 10 }, () => signedIn()));
    const refused = new Set([3, 7]);
    for (const index of refused)
      await disableAccount(manager.sql, (accounts[index] as { account: TestAccount }).account.email);
    const tokens = Array.from(
      { length: 100 },
      (_, index) => (accounts[index % 10] as { token: string }).token,
    );

    const started = performance.now();
    const standings = await standingsOf(tokens);
    const elapsedMs = performance.now() - started;
    console.info(`token-standings: 100 tokens of 10 accounts answered in ${elapsedMs.toFixed(0)} ms`);

    standings.forEach((judged, index) => {
      expect(judged, `token ${index}`).toEqual(
        refused.has(index % 10)
          ? { stands: false, status: 401, reason: expect.stringMatching(/disabled/) }
          : { stands: true },
      );
    });
    // A relay asks every few seconds: a bound with margin for 2 busy cores, well under that period.
    expect(elapsedMs).toBeLessThan(2000);
  });
});
