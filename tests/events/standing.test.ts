/**
 * An open `/api/v1/operations/events` stream ends once its token stops standing (issue 13's
 * performance work): within SSE_STANDING_CHECK_MS + 1 s of the account being disabled, of the
 * client's authorization version being bumped and of the sign-in session being logged out, and
 * at the expiry of a short-lived token; a reconnect with the same token is refused. The checks
 * of all open streams are one query per tick, one question per distinct token.
 */
import { endSessionUrl, parseForms, type SignInResult } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { silentLogger } from "@tjm/platform";
import type { JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { StandingWatch } from "../../manager/src/events/standing-watch.ts";
import { disableAccount } from "../../manager/src/identity/accounts/index.ts";
import type { StandingQuestion } from "../../manager/src/identity/tokens/standing.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

const CHECK_MS = 1000;
const CLOSE_WITHIN_MS = CHECK_MS + 1000;

let manager: TestManager;
beforeAll(async () => {
  manager = await TestManager.start({ env: { SSE_STANDING_CHECK_MS: String(CHECK_MS) } });
});
afterAll(() => manager?.close());

interface OpenStream {
  /** Milliseconds from the call until the stream ends; fails once `timeoutMs` passed. */
  closed(timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

async function openEvents(token: string): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(`${manager.baseUrl}/api/v1/operations/events`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let received = "";
  let ended = false;
  while (!received.includes(": connected")) {
    const next = await reader.read();
    if (next.done) throw new Error(`the stream ended before it was connected: ${received}`);
    received += decoder.decode(next.value, { stream: true });
  }
  return {
    async closed(timeoutMs = CLOSE_WITHIN_MS + 2000) {
      const started = Date.now();
      const timeout = setTimeout(() => controller.abort(), timeoutMs);
      try {
        while (!(await reader.read()).done);
        ended = true;
        return Date.now() - started;
      } catch {
        throw new Error(`the stream was still open after ${timeoutMs} ms`);
      } finally {
        clearTimeout(timeout);
      }
    },
    async close() {
      if (!ended) controller.abort();
      await reader.closed.catch(() => {});
    },
  };
}

async function eventsStatus(token: string): Promise<number> {
  const response = await fetch(`${manager.baseUrl}/api/v1/operations/events`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await response.body?.cancel();
  return response.status;
}

async function operatorSignedIn(): Promise<{
  account: TestAccount;
  client: TestClient;
  tokens: SignInResult;
}> {
  const account = await createTestAccount(manager.sql, { roles: ["operator"] });
  const client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
  const tokens = await signInAs(manager.issuerUrl, client, account, resourceIndicator(OPERATIONS_AUDIENCE));
  return { account, client, tokens };
}

/** RP-initiated logout at the provider, confirmed on its page. */
async function logOut(client: TestClient, tokens: SignInResult): Promise<void> {
  const url = await endSessionUrl({
    issuer: manager.issuerUrl,
    clientId: client.clientId,
    idTokenHint: tokens.idToken,
  });
  const page = await tokens.session.fetch(url);
  const form = parseForms(await page.text(), url).find((candidate) =>
    candidate.action.endsWith("/session/end/confirm"),
  );
  expect(form).toBeDefined();
  const { action, fields } = form as { action: string; fields: Record<string, string> };
  const confirmed = await tokens.session.fetch(action, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...fields, logout: "yes" }),
  });
  expect(confirmed.status).toBe(303);
  await confirmed.body?.cancel();
}

describe("an open event stream", () => {
  it("stays open while its token stands", async () => {
    const { tokens } = await operatorSignedIn();
    const stream = await openEvents(tokens.accessToken);
    try {
      await expect(stream.closed(3 * CHECK_MS)).rejects.toThrow(/still open/);
    } finally {
      await stream.close();
    }
  });

  it(`closes within SSE_STANDING_CHECK_MS + 1 s of its account being disabled, with every other stream of its token`, async () => {
    const { account, tokens } = await operatorSignedIn();
    const streams = await Promise.all([1, 2, 3].map(() => openEvents(tokens.accessToken)));
    await disableAccount(manager.sql, account.email);
    for (const closedIn of await Promise.all(streams.map((stream) => stream.closed())))
      expect(closedIn).toBeLessThan(CLOSE_WITHIN_MS);
    expect(await eventsStatus(tokens.accessToken)).toBe(401);
  });

  it("closes within SSE_STANDING_CHECK_MS + 1 s of its client's authorization version being bumped", async () => {
    const { client, tokens } = await operatorSignedIn();
    const stream = await openEvents(tokens.accessToken);
    await manager.sql`
      update oauth_clients set authorization_version = authorization_version + 1
      where client_id = ${client.clientId}`;
    expect(await stream.closed()).toBeLessThan(CLOSE_WITHIN_MS);
    expect(await eventsStatus(tokens.accessToken)).toBe(401);
  });

  it("closes within SSE_STANDING_CHECK_MS + 1 s of its sign-in session being logged out", async () => {
    const { client, tokens } = await operatorSignedIn();
    const stream = await openEvents(tokens.accessToken);
    await logOut(client, tokens);
    expect(await stream.closed()).toBeLessThan(CLOSE_WITHIN_MS);
    expect(await eventsStatus(tokens.accessToken)).toBe(401);
  });

  it("closes within SSE_STANDING_CHECK_MS + 1 s of its account losing the operator role", async () => {
    const { account, tokens } = await operatorSignedIn();
    const stream = await openEvents(tokens.accessToken);
    await manager.sql`delete from account_roles where account_id = ${account.accountId} and role = 'operator'`;
    expect(await stream.closed()).toBeLessThan(CLOSE_WITHIN_MS);
    expect(await eventsStatus(tokens.accessToken)).toBe(403);
  });

  it("of an external issuer's short-lived token closes at the token's expiry", async () => {
    const token = await manager.issuer.token({ expiresInSeconds: 3 });
    const { exp } = JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString()) as {
      exp: number;
    };
    const stream = await openEvents(token);
    await stream.closed(5000);
    const closedAt = Date.now();
    expect(closedAt).toBeGreaterThanOrEqual(exp * 1000);
    expect(closedAt).toBeLessThan(exp * 1000 + 1000);
  });
});

/**
 * A StandingWatch asking every 50 ms, whose answers refuse the subjects in `refused` (read at
 * each tick), with the questions of every tick kept in `asked`.
 */
function tickingWatch(refused: ReadonlySet<string>): { watch: StandingWatch; asked: StandingQuestion[][] } {
  const asked: StandingQuestion[][] = [];
  const watch = new StandingWatch({
    tjmIssuer: "https://tjm.example/oidc",
    intervalMs: 50,
    standings: async (questions) => {
      asked.push([...questions]);
      return questions.map(({ claims }) =>
        refused.has(claims.sub as string) ? { ok: false, status: 401, reason: "refused" } : { ok: true },
      );
    },
    logger: silentLogger,
  });
  return { watch, asked };
}

describe("StandingWatch", () => {
  it("asks once per tick for every open stream, and ends only those whose token no longer stands", async () => {
    const refused = new Set(["b"]);
    const { watch, asked } = tickingWatch(refused);
    const exp = Math.floor(Date.now() / 1000) + 600;
    const claimsOf = (sub: string, iss = "https://tjm.example/oidc"): JWTPayload => ({ iss, sub, exp });
    const ended: string[] = [];
    const unwatch = ["a", "b", "c"].map((sub) => watch.watch(claimsOf(sub), () => ended.push(sub)));
    const unwatchExternal = watch.watch(claimsOf("x", "https://other.example"), () => ended.push("x"));
    await new Promise((resolve) => setTimeout(resolve, 130));
    for (const stop of [...unwatch, unwatchExternal]) stop();
    expect(ended).toEqual(["b"]);
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(asked[0]?.map(({ claims }) => claims.sub)).toEqual(["a", "b", "c"]);
    expect(asked[1]?.map(({ claims }) => claims.sub)).toEqual(["a", "c"]);
  });

  it("asks once per token however many streams it opened, and ends all of them when it stops standing", async () => {
    const refused = new Set<string>();
    const { watch, asked } = tickingWatch(refused);
    const exp = Math.floor(Date.now() / 1000) + 600;
    // Each stream verifies its token anew: equal claims, distinct objects.
    const claimsOf = (sub: string): JWTPayload => ({ iss: "https://tjm.example/oidc", sub, exp });
    const ended: string[] = [];
    const unwatchA = [1, 2, 3].map((n) => watch.watch(claimsOf("a"), () => ended.push(`a${n}`)));
    const unwatchB = watch.watch(claimsOf("b"), () => ended.push("b"));
    (unwatchA[0] as () => void)();
    await vi.waitFor(() => expect(asked.length).toBeGreaterThan(0), { timeout: 5000 });
    expect(asked[0]?.map(({ claims }) => claims.sub)).toEqual(["a", "b"]);
    refused.add("a");
    await vi.waitFor(() => expect(ended.sort()).toEqual(["a2", "a3"]), { timeout: 5000 });
    const asks = asked.length;
    await vi.waitFor(() => expect(asked.length).toBeGreaterThan(asks), { timeout: 5000 });
    expect(asked.at(-1)?.map(({ claims }) => claims.sub)).toEqual(["b"]);
    unwatchB();
  });

  it("ends every stream of a token at its expiry, and one already expired at once", async () => {
    const watch = new StandingWatch({
      tjmIssuer: "https://tjm.example/oidc",
      intervalMs: 60_000,
      standings: async (questions) => questions.map(() => ({ ok: true })),
      logger: silentLogger,
    });
    const soon = { iss: "https://other.example", sub: "x", exp: Math.floor(Date.now() / 1000) + 1 };
    const ended: string[] = [];
    watch.watch({ ...soon }, () => ended.push("x1"));
    watch.watch({ ...soon }, () => ended.push("x2"));
    watch.watch({ ...soon, exp: soon.exp - 10 }, () => ended.push("expired"));
    expect(ended).toEqual(["expired"]);
    await vi.waitFor(() => expect(ended.sort()).toEqual(["expired", "x1", "x2"]), { timeout: 3000 });
  });
});
