import { BrowserSession } from "@tjm/devstack/oidc-client";
import { describe, expect, it } from "vitest";

function sessionAt(startMs: number) {
  const clock = { now: startMs };
  return { clock, session: new BrowserSession({ now: () => clock.now }) };
}

describe("BrowserSession cookie jar", () => {
  it("sends a cookie back to its host on any port, but not to another host", () => {
    const session = new BrowserSession();
    session.store("http://127.0.0.1:4000/oidc/auth", ["_session=abc; path=/oidc; httponly"]);
    expect(session.cookieHeader("http://127.0.0.1:4000/oidc/token")).toBe("_session=abc");
    expect(session.cookieHeader("http://127.0.0.1:5000/oidc/token")).toBe("_session=abc");
    expect(session.cookieHeader("http://localhost:4000/oidc/token")).toBe("");
  });

  it("treats the hosts named in sameSiteAs as one", () => {
    const session = new BrowserSession({ sameSiteAs: ["http://localhost:4000", "http://127.0.0.1:5000"] });
    session.store("http://localhost:4000/oidc/auth", ["_session=abc; path=/"]);
    expect(session.cookieHeader("http://127.0.0.1:5000/oidc")).toBe("_session=abc");
  });

  it.each([
    ["/oidc", "/oidc", true],
    ["/oidc", "/oidc/interaction/x", true],
    ["/oidc/", "/oidc/interaction", true],
    ["/oidc", "/oidcx", false],
    ["/oidc", "/", false],
    ["/", "/anything", true],
  ])("a cookie with path %s is sent to %s: %s", (cookiePath, requestPath, sent) => {
    const session = new BrowserSession();
    session.store("http://127.0.0.1/", [`c=1; Path=${cookiePath}`]);
    expect(session.cookieHeader(`http://127.0.0.1${requestPath}`)).toBe(sent ? "c=1" : "");
  });

  it("defaults the path to the directory of the request that set it", () => {
    const session = new BrowserSession();
    session.store("http://127.0.0.1/oidc/interaction/abc", ["c=1"]);
    expect(session.list()[0]?.path).toBe("/oidc/interaction");
    expect(session.cookieHeader("http://127.0.0.1/oidc/interaction/abc/login")).toBe("c=1");
    expect(session.cookieHeader("http://127.0.0.1/oidc/auth")).toBe("");
  });

  it("sends the most specific path first", () => {
    const session = new BrowserSession();
    session.store("http://127.0.0.1/", ["wide=1; path=/", "narrow=2; path=/oidc/interaction"]);
    expect(session.cookieHeader("http://127.0.0.1/oidc/interaction/x")).toBe("narrow=2; wide=1");
  });

  it("overwrites a cookie of the same name and path, and keeps one of another path", () => {
    const session = new BrowserSession();
    session.store("http://127.0.0.1/", ["c=old; path=/", "c=other; path=/oidc"]);
    session.store("http://127.0.0.1/", ["c=new; path=/"]);
    expect(session.cookieHeader("http://127.0.0.1/")).toBe("c=new");
    expect(session.cookieHeader("http://127.0.0.1/oidc")).toBe("c=other; c=new");
  });

  it("stops sending a cookie when its Max-Age has passed", () => {
    const { clock, session } = sessionAt(1_000_000);
    session.store("http://127.0.0.1/", ["c=1; Max-Age=60"]);
    clock.now += 59_000;
    expect(session.cookieHeader("http://127.0.0.1/")).toBe("c=1");
    clock.now += 1_000;
    expect(session.cookieHeader("http://127.0.0.1/")).toBe("");
    expect(session.list()).toEqual([]);
  });

  it("honours Expires, and Max-Age over Expires whichever comes first", () => {
    const { clock, session } = sessionAt(Date.parse("2030-01-01T00:00:00Z"));
    session.store("http://127.0.0.1/", [
      "byDate=1; expires=Tue, 01 Jan 2030 00:10:00 GMT",
      "both=1; Max-Age=60; expires=Tue, 01 Jan 2030 01:00:00 GMT",
    ]);
    clock.now += 120_000;
    expect(session.cookieHeader("http://127.0.0.1/")).toBe("byDate=1");
    clock.now += 600_000;
    expect(session.cookieHeader("http://127.0.0.1/")).toBe("");
  });

  it("deletes a cookie set again with an expiry in the past (how servers clear one)", () => {
    const session = new BrowserSession();
    session.store("http://127.0.0.1/", ["_interaction=abc; path=/oidc"]);
    session.store("http://127.0.0.1/", ["_interaction=; path=/oidc; expires=Thu, 01 Jan 1970 00:00:00 GMT"]);
    expect(session.list()).toEqual([]);
  });

  it("ignores a Domain attribute that does not cover the host, or names another address", () => {
    const session = new BrowserSession();
    session.store("http://app.example.test/", ["a=1; Domain=other.test", "b=1; Domain=example.test"]);
    session.store("http://127.0.0.1/", ["c=1; Domain=0.0.1"]);
    expect(session.cookieHeader("http://api.example.test/")).toBe("b=1");
    expect(session.list().map((cookie) => cookie.name)).toEqual(["b"]);
  });

  it("sends stored cookies and stores the ones answered, without following the redirect", async () => {
    const { createServer } = await import("node:http");
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.cookie);
      res.setHeader("set-cookie", ["first=1; path=/", "second=2; path=/"]);
      res.writeHead(302, { location: "/elsewhere" }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      const session = new BrowserSession();
      session.store(`http://127.0.0.1:${port}/`, ["earlier=0"]);
      const response = await session.fetch(`http://127.0.0.1:${port}/start`);
      expect(response.status).toBe(302);
      expect(seen).toEqual(["earlier=0"]);
      expect(session.cookieHeader(`http://127.0.0.1:${port}/`)).toBe("earlier=0; first=1; second=2");
    } finally {
      server.close();
    }
  });
});
