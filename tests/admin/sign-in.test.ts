/**
 * The Admin console's sign-in (issue 13): the cookie's flags, a new session id at sign-in,
 * open redirects refused, a non-operator's no-access page, CSRF on unsafe requests, the proxy
 * through the SDK, no token in any answer but the ID token as the sign-out's hint, and no-store
 * on the enrollment token.
 */
import { BrowserSession } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { silentLogger } from "@tjm/platform";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminApp } from "../../admin/src/app.ts";
import { sessionCookieFor } from "../../admin/src/sessions/cookie.ts";
import { createSealer } from "../../admin/src/sessions/sealing.ts";
import { Sessions } from "../../admin/src/sessions/sessions.ts";
import { RelyingParty } from "../../admin/src/sign-in/relying-party.ts";
import { TestAdmin } from "./admin-harness.ts";

let admin: TestAdmin;
beforeAll(async () => {
  admin = await TestAdmin.start();
});
afterAll(async () => {
  await admin?.close();
});

async function signedIn() {
  const { browser, callback } = await admin.signIn(await admin.operator());
  expect(callback.status).toBe(303);
  return browser;
}

describe("sign-in", () => {
  it("sets a __Host- cookie, HttpOnly, Secure, SameSite=Lax, Path=/, without Domain, under a new id", async () => {
    let preSessionId: string | undefined;
    const { browser, callback } = await admin.signIn(await admin.operator(), new BrowserSession(), (b) => {
      preSessionId = admin.cookieOf(b);
    });
    expect(callback.status).toBe(303);
    expect(callback.headers.get("location")).toBe("/jobs");
    const setCookie = callback.headers
      .getSetCookie()
      .find((value) => value.startsWith("__Host-tjm_admin=") && !value.startsWith("__Host-tjm_admin=;"));
    expect(setCookie).toBeDefined();
    const attributes = (setCookie as string).split(";").map((part) => part.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(["httponly", "secure", "samesite=lax", "path=/"]));
    expect(attributes.some((attribute) => attribute.startsWith("domain="))).toBe(false);
    expect(preSessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(admin.cookieOf(browser)).not.toBe(preSessionId);
    const session = await admin.request(browser, "/api/session");
    expect(session.status).toBe(200);
  });

  it.each(["//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"])(
    "refuses returnTo=%s (no open redirect)",
    async (returnTo) => {
      const response = await fetch(`${admin.baseUrl}/auth/sign-in?returnTo=${encodeURIComponent(returnTo)}`, {
        redirect: "manual",
      });
      expect(response.status).toBe(400);
      expect(response.headers.get("location")).toBeNull();
    },
  );

  it("asks for the sid in the ID token, and for the mfa acr as essential after auth.mfa_required (stepUp=mfa) only", async () => {
    const claimsOf = async (query: string) => {
      const response = await fetch(`${admin.baseUrl}/auth/sign-in?returnTo=%2Fjobs${query}`, {
        redirect: "manual",
      });
      expect(response.status).toBe(303);
      return new URL(response.headers.get("location") as string).searchParams.get("claims");
    };
    expect(JSON.parse((await claimsOf("&stepUp=mfa")) as string)).toEqual({
      id_token: { sid: null, acr: { essential: true, value: "urn:tjm:acr:mfa" } },
    });
    expect(JSON.parse((await claimsOf("")) as string)).toEqual({ id_token: { sid: null } });
  });

  it("sets a CSP without inline scripts that forbids framing", async () => {
    const response = await fetch(`${admin.baseUrl}/`);
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
  });

  it("answers what is not a page with nosniff and a CSP that allows nothing and no framing", async () => {
    const response = await fetch(`${admin.baseUrl}/api/session`);
    expect(response.status).toBe(401);
    await response.body?.cancel();
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; frame-ancestors 'none'",
    );
  });
});

describe("CSRF", () => {
  it("refuses a cross-site form POST", async () => {
    const browser = await signedIn();
    const response = await browser.fetch(`${admin.baseUrl}/api/operations/enrollment-tokens`, {
      method: "POST",
      headers: {
        origin: "https://evil.example",
        "sec-fetch-site": "cross-site",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "ttlSeconds=3600",
    });
    expect(response.status).toBe(403);
  });

  it("refuses JSON sent as text/plain, even from the same origin", async () => {
    const browser = await signedIn();
    const response = await browser.fetch(`${admin.baseUrl}/api/operations/enrollment-tokens`, {
      method: "POST",
      headers: { origin: admin.baseUrl, "content-type": "text/plain" },
      body: JSON.stringify({ ttlSeconds: 3600 }),
    });
    expect(response.status).toBe(403);
  });

  it("refuses a JSON POST without an Origin or Sec-Fetch-Site", async () => {
    const browser = await signedIn();
    const response = await browser.fetch(`${admin.baseUrl}/api/operations/enrollment-tokens`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ttlSeconds: 3600 }),
    });
    expect(response.status).toBe(403);
  });
});

describe("the proxy", () => {
  it("lists jobs and workers through the Manager", async () => {
    const browser = await signedIn();
    const jobs = await admin.request(browser, "/api/operations/jobs?limit=5");
    expect(jobs.status).toBe(200);
    expect(await jobs.json()).toMatchObject({ items: expect.any(Array) });
    const workers = await admin.request(browser, "/api/operations/workers");
    expect(workers.status).toBe(200);
  });

  it("answers 401 without a session", async () => {
    expect((await fetch(`${admin.baseUrl}/api/operations/jobs`)).status).toBe(401);
    expect((await fetch(`${admin.baseUrl}/api/events`)).status).toBe(401);
  });

  it("issues an enrollment token with Cache-Control: no-store", async () => {
    const browser = await signedIn();
    const response = await admin.request(browser, "/api/operations/enrollment-tokens", {
      method: "POST",
      body: { ttlSeconds: 3600 },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("never hands the browser an access or refresh token, and the ID token only as the sign-out's hint", async () => {
    const seen: string[] = [];
    const record = async (response: Response) => {
      seen.push(JSON.stringify([...response.headers]), await response.text());
    };
    const account = await admin.operator();
    const browser = new BrowserSession();
    const { callback } = await admin.signIn(account, browser);
    await record(callback);
    const [row] = await admin.sql<
      { sealedTokens: Buffer }[]
    >`select sealed_tokens from admin_sessions order by created_at desc limit 1`;
    // Sealed at rest: the stored bytes hold none of the tokens the session decrypts to.
    const stored = await admin.storedSession(browser);
    const tokens = [
      stored?.tokens.access.operations?.token,
      stored?.tokens.access["account-portal"]?.token,
      stored?.tokens.refreshToken,
      stored?.tokens.idToken,
    ];
    expect(tokens.every((token) => typeof token === "string" && token.length > 20)).toBe(true);
    for (const token of tokens) expect(row?.sealedTokens.includes(Buffer.from(token as string))).toBe(false);
    for (const path of ["/api/session", "/api/operations/jobs", "/api/operations/workers", "/"]) {
      await record(await admin.request(browser, path));
    }
    await record(
      await admin.request(browser, "/api/operations/enrollment-tokens", { method: "POST", body: {} }),
    );
    // The sign-out hands the provider the ended session's ID token, naming its session (sid), so
    // that the provider ends it unasked; it is no bearer token for any route.
    const signOut = await admin.request(browser, "/auth/sign-out", { method: "POST", body: {} });
    const logoutUrl = new URL(((await signOut.json()) as { logoutUrl: string }).logoutUrl);
    const hint = logoutUrl.searchParams.get("id_token_hint");
    expect(hint).toBe(stored?.tokens.idToken);
    expect(decodeJwt(hint as string)).toMatchObject({ aud: admin.clientId, sid: expect.any(String) });
    logoutUrl.searchParams.delete("id_token_hint");
    seen.push(JSON.stringify([...signOut.headers]), logoutUrl.toString());
    const everything = seen.join("\n");
    // JWTs (access and ID tokens) start with a base64url JSON header; refresh tokens are opaque,
    // so the check for them is that the session's sealed tokens never appear decrypted.
    expect(everything).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+/);
  });
});

describe("sign-in while the OpenID provider does not answer", () => {
  it("answers 503 with a page that says so, not an internal error", async () => {
    const relyingParty = new RelyingParty({
      issuer: "http://127.0.0.1:1/oidc",
      clientId: "console",
      clientSecret: "unused",
      audience: OPERATIONS_AUDIENCE,
    });
    const console = createAdminApp({
      publicOrigin: admin.baseUrl,
      managerUrl: admin.manager.baseUrl,
      sessions: new Sessions({
        sql: admin.sql,
        sealer: createSealer("test-admin-session-key-0123456789abcdef"),
        relyingParty,
        idleMinutes: 30,
        absoluteHours: 12,
        logger: silentLogger,
      }),
      relyingParty,
      cookie: sessionCookieFor(admin.baseUrl),
      logger: silentLogger,
      sql: admin.sql,
    });
    try {
      const response = await console.app.request(`${admin.baseUrl}/auth/sign-in?returnTo=/`);
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("30");
      expect(await response.text()).toContain("Sign-in is unavailable");
    } finally {
      console.stop();
    }
  });
});
