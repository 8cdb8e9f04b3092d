/**
 * The Admin console's `/api/events` relay and the ends of a session (issue 13): the relay
 * passes the Manager's events on unbuffered, all sessions on one upstream stream, and closes
 * within 5 s of sign-out, of a back-channel logout and of the account being disabled; forged
 * and replayed logout tokens are refused.
 */

import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { type BrowserSession, endSessionUrl, parseForms } from "@tjm/devstack/oidc-client";
import { generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { disableAccount } from "../../manager/src/identity/accounts/index.ts";
import { TestAdmin } from "./admin-harness.ts";

const CLOSE_WITHIN_MS = 5000;
const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";

let admin: TestAdmin;
let projectId: string;
beforeAll(async () => {
  // The console's own checks at their defaults: sessions every 1 s, tokens' standing every 2 s.
  admin = await TestAdmin.start();
  ({ projectId } = await admin.manager.createProject());
});
afterAll(async () => {
  await admin?.close();
});

interface OpenStream {
  response: Response;
  /** Reads until `text` has arrived; fails after `timeoutMs`. */
  until(text: string, timeoutMs?: number): Promise<string>;
  /** Milliseconds until the stream ends. */
  closed(): Promise<number>;
}

async function openEvents(browser: BrowserSession): Promise<OpenStream> {
  const response = await admin.request(browser, "/api/events");
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let received = "";
  return {
    response,
    async until(text, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!received.includes(text)) {
        const next = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error(`no "${text}" in: ${received}`)), deadline - Date.now()),
          ),
        ]);
        if (next.done) throw new Error(`the stream ended before "${text}": ${received}`);
        received += decoder.decode(next.value, { stream: true });
      }
      return received;
    },
    async closed() {
      const started = Date.now();
      for (;;) {
        const next = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error("still open")), CLOSE_WITHIN_MS + 2000),
          ),
        ]);
        if (next.done) return Date.now() - started;
      }
    },
  };
}

async function signedIn() {
  const account = await admin.operator();
  const { browser, callback } = await admin.signIn(account);
  expect(callback.status).toBe(303);
  return { account, browser };
}

describe("GET /api/events", () => {
  it("relays a job event unbuffered, with headers that stop buffering", async () => {
    const { browser } = await signedIn();
    const stream = await openEvents(browser);
    expect(stream.response.headers.get("content-type")).toContain("text/event-stream");
    expect(stream.response.headers.get("cache-control")).toContain("no-cache");
    expect(stream.response.headers.get("x-accel-buffering")).toBe("no");
    await stream.until(": connected");
    const submitted = await admin.request(browser, "/api/operations/jobs", {
      method: "POST",
      body: sampleSubmission(projectId),
    });
    expect(submitted.status).toBe(201);
    const { id } = (await submitted.json()) as { id: string };
    expect(await stream.until(id)).toContain("event: job.created");
    await stream.response.body?.cancel().catch(() => {});
  });

  it("follows the Manager once for every session: three sessions, one upstream stream, each event to all", async () => {
    const streams = await Promise.all(
      [1, 2, 3].map(async () => {
        const stream = await openEvents((await signedIn()).browser);
        await stream.until(": connected");
        return stream;
      }),
    );
    expect(admin.manager.manager.events.subscribers).toBe(1);
    const submitted = await admin.request((await signedIn()).browser, "/api/operations/jobs", {
      method: "POST",
      body: sampleSubmission(projectId),
    });
    const { id } = (await submitted.json()) as { id: string };
    for (const stream of streams) {
      const received = await stream.until(id);
      expect(received.match(/event: job\.created/g)).toHaveLength(1);
      await stream.response.body?.cancel().catch(() => {});
    }
  });

  it("refuses an unknown event kind and a jobId that is not a UUID, as the Manager's own stream does", async () => {
    const { browser } = await signedIn();
    const unknown = await admin.request(browser, "/api/events?kinds=job.created,job.exploded");
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(await unknown.json())).toContain('unknown \\"job.exploded\\"');
    expect((await admin.request(browser, "/api/events?jobId=42")).status).toBe(400);
  });

  it("closes within 5 s of sign-out, and then answers 401", async () => {
    const { browser } = await signedIn();
    const stream = await openEvents(browser);
    await stream.until(": connected");
    const cookieBefore = browser.cookieHeader(admin.baseUrl);
    const signOut = await admin.request(browser, "/auth/sign-out", { method: "POST", body: {} });
    expect(signOut.status).toBe(200);
    expect(await stream.closed()).toBeLessThan(CLOSE_WITHIN_MS);
    const again = await fetch(`${admin.baseUrl}/api/events`, { headers: { cookie: cookieBefore } });
    expect(again.status).toBe(401);
  });

  it("closes within 5 s of the account being disabled", async () => {
    const { account, browser } = await signedIn();
    const stream = await openEvents(browser);
    await stream.until(": connected");
    await disableAccount(admin.manager.sql, account.email);
    expect(await stream.closed()).toBeLessThan(CLOSE_WITHIN_MS);
    expect((await admin.request(browser, "/api/events")).status).toBe(401);
  });
});

describe("back-channel logout", () => {
  /** Logs out at the provider only (not through the console), confirming its page. */
  async function logOutAtProvider(browser: BrowserSession): Promise<void> {
    const logoutUrl = await endSessionUrl({ issuer: admin.manager.issuerUrl, clientId: admin.clientId });
    const page = await browser.fetch(logoutUrl);
    const form = parseForms(await page.text(), logoutUrl).find((f) =>
      f.action.endsWith("/session/end/confirm"),
    );
    expect(form).toBeDefined();
    const confirmed = await browser.fetch((form as { action: string }).action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...(form as { fields: Record<string, string> }).fields, logout: "yes" }),
    });
    await confirmed.body?.cancel();
  }

  it("ends the console session of the provider session, and its stream within 5 s", async () => {
    const { browser } = await signedIn();
    const stream = await openEvents(browser);
    await stream.until(": connected");
    const tokensBefore = admin.logoutTokens.length;
    const cookie = browser.cookieHeader(admin.baseUrl);
    const [{ sid }] = (await admin.sql<{ sid: string }[]>`
      select sid from admin_sessions order by created_at desc limit 1`) as unknown as [{ sid: string }];
    await logOutAtProvider(browser);
    expect(await stream.closed()).toBeLessThan(CLOSE_WITHIN_MS);
    expect(admin.logoutTokens.length).toBeGreaterThan(tokensBefore);
    const [{ n }] = (await admin.sql<{ n: number }[]>`
      select count(*)::int as n from admin_sessions where sid = ${sid}`) as unknown as [{ n: number }];
    expect(n).toBe(0);
    expect((await fetch(`${admin.baseUrl}/api/session`, { headers: { cookie } })).status).toBe(401);

    // The same token again: a replay.
    const replayed = await fetch(`${admin.baseUrl}/auth/backchannel-logout`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ logout_token: admin.logoutTokens.at(-1) as string }),
    });
    expect(replayed.status).toBe(400);
  });

  it("refuses a logout token signed by anyone but the provider", async () => {
    const { browser } = await signedIn();
    const [{ sid, accountSub }] = (await admin.sql<{ sid: string; accountSub: string }[]>`
      select sid, account_sub from admin_sessions order by created_at desc limit 1`) as unknown as [
      { sid: string; accountSub: string },
    ];
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await new SignJWT({ sid, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } })
      .setProtectedHeader({ alg: "RS256", typ: "logout+jwt" })
      .setIssuer(admin.manager.issuerUrl)
      .setAudience(admin.clientId)
      .setSubject(accountSub)
      .setIssuedAt()
      .setJti(crypto.randomUUID())
      .sign(privateKey);
    const response = await fetch(`${admin.baseUrl}/auth/backchannel-logout`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ logout_token: forged }),
    });
    expect(response.status).toBe(400);
    expect((await admin.request(browser, "/api/session")).status).toBe(200);
  });
});
