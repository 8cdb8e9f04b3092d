/**
 * Discovery and the key set: every endpoint comes from OIDC_ISSUER_URL whatever Host or
 * forwarding headers a request carries (a forged Host once turned them into
 * http://evil.example/…), and both documents say how long they may be cached.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";

let manager: TestManager;

beforeAll(async () => {
  manager = await TestManager.start();
});
afterAll(() => manager?.close());

/** A GET with exactly these headers (fetch would not send a Host of our choosing). */
function get(path: string, headers: Record<string, string>) {
  const url = new URL(`${manager.issuerUrl}${path}`);
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      const req = request(url, { method: "GET", headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      });
      req.on("error", reject);
      req.end();
    },
  );
}

/** Every string in the document that looks like a URL. */
function urlsIn(document: unknown): string[] {
  if (typeof document === "string") return /^[a-z]+:\/\//i.test(document) ? [document] : [];
  if (Array.isArray(document)) return document.flatMap(urlsIn);
  if (document && typeof document === "object") return Object.values(document).flatMap(urlsIn);
  return [];
}

describe("the discovery document", () => {
  it.each([
    ["a forged Host", { host: "evil.example" }],
    [
      "forwarding headers from an untrusted peer",
      { "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" },
    ],
    [
      "both",
      { host: "evil.example:8443", "x-forwarded-host": "evil.example", forwarded: "host=evil.example" },
    ],
  ])("names only the issuer's endpoints under %s", async (_, headers) => {
    const answer = await get("/.well-known/openid-configuration", headers);
    expect(answer.status).toBe(200);
    const document = JSON.parse(answer.body) as Record<string, unknown>;
    expect(document.issuer).toBe(manager.issuerUrl);
    const urls = urlsIn(document);
    expect(urls.length).toBeGreaterThan(5);
    for (const url of urls)
      expect(url.startsWith(`${manager.issuerUrl}/`) || url === manager.issuerUrl).toBe(true);
    expect(answer.body).not.toContain("evil.example");
  });

  it.each([["/.well-known/openid-configuration"], ["/jwks"]])(
    "%s carries a bounded public Cache-Control",
    async (path) => {
      const answer = await get(path, {});
      expect(answer.status).toBe(200);
      const cacheControl = String(answer.headers["cache-control"]);
      expect(cacheControl).toMatch(/^public, max-age=\d+$/);
      expect(Number(/max-age=(\d+)/.exec(cacheControl)?.[1])).toBeLessThanOrEqual(300);
    },
  );
});

describe("the authorization endpoint", () => {
  it("redirects to the issuer's own interaction page under a forged Host", async () => {
    const answer = await get(
      `/auth?client_id=${crypto.randomUUID()}&response_type=code&scope=openid&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcallback`,
      { host: "evil.example" },
    );
    expect(answer.body).not.toContain("evil.example");
    expect(String(answer.headers.location ?? "")).not.toContain("evil.example");
  });
});
