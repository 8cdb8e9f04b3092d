import { silentLogger } from "@tjm/platform";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import type { Session } from "../sessions/sessions.ts";
import { registerClientsProxy } from "./clients.ts";

const MANAGER = "http://manager.test";
const CLIENT_ID = "7d1f4a52-3c9e-4b8f-a0d1-6e2b9c4f8a31";

/** A console app with one session (`tokens`: the resources it holds) and a Manager that records what it is asked. */
function consoleWith(resources: string[], answer = () => Response.json({ ok: true })) {
  const asked: Request[] = [];
  const ended: Buffer[] = [];
  const session = {
    hash: Buffer.from("session"),
    sub: "account",
    sid: undefined,
    tokens: {
      access: Object.fromEntries(
        resources.map((resource) => [resource, { token: `${resource}-token`, expiresAt: 0 }]),
      ),
    },
  } as unknown as Session;
  const deps = {
    managerUrl: MANAGER,
    logger: silentLogger,
    sessions: { end: async (hash: Buffer) => void ended.push(hash) },
  } as unknown as AdminDeps;
  const app = new Hono<AdminEnv>();
  app.use(async (c, next) => {
    c.set("requestId", "request-1");
    c.set("session", session);
    await next();
  });
  registerClientsProxy(app, deps, async (input, init) => {
    const request = new Request(input, init);
    asked.push(request);
    return answer();
  });
  return { app, asked, ended };
}

describe("the clients proxy", () => {
  it("refuses a session without an admin-console token with 403, asking the Manager nothing", async () => {
    const { app, asked } = consoleWith(["account-portal", "operations"]);
    for (const [method, path] of [
      ["GET", "/api/management/clients"],
      ["POST", "/api/management/clients/rotate-secret"],
      ["DELETE", `/api/management/clients/${CLIENT_ID}`],
    ] as const) {
      const response = await app.request(path, { method, body: method === "POST" ? "{}" : undefined });
      expect(response.status).toBe(403);
      expect((await response.json()).code).toBe("auth.token_refused");
    }
    expect(asked).toEqual([]);
  });

  it.each([
    [
      "GET",
      "/api/management/clients?name=rep&type=public&offset=50",
      "/api/v1/management/clients?name=rep&type=public&offset=50",
    ],
    ["GET", `/api/management/clients/${CLIENT_ID}`, `/api/v1/management/clients/${CLIENT_ID}`],
    ["PUT", `/api/management/clients/${CLIENT_ID}`, `/api/v1/management/clients/${CLIENT_ID}`],
    ["DELETE", `/api/management/clients/${CLIENT_ID}`, `/api/v1/management/clients/${CLIENT_ID}`],
    [
      "GET",
      `/api/management/clients/${CLIENT_ID}/oauth-grants`,
      `/api/v1/management/clients/${CLIENT_ID}/oauth-grants`,
    ],
    [
      "PUT",
      `/api/management/clients/${CLIENT_ID}/oauth-grants/account-portal`,
      `/api/v1/management/clients/${CLIENT_ID}/oauth-grants/account-portal`,
    ],
    [
      "DELETE",
      `/api/management/clients/${CLIENT_ID}/oauth-grants/account-portal`,
      `/api/v1/management/clients/${CLIENT_ID}/oauth-grants/account-portal`,
    ],
  ])("forwards %s %s to the Manager's %s with the admin-console token", async (method, path, managerPath) => {
    const { app, asked } = consoleWith(["account-portal", "admin-console"]);
    const body = method === "PUT" ? '{"scopes":["read"]}' : undefined;
    const response = await app.request(path, { method, body });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const [request] = asked;
    expect(`${request?.method} ${request?.url}`).toBe(`${method} ${MANAGER}${managerPath}`);
    expect(request?.headers.get("authorization")).toBe("Bearer admin-console-token");
    expect(request?.headers.get("x-request-id")).toBe("request-1");
    if (body !== undefined) expect(await request?.text()).toBe(body);
  });

  it.each([
    ["POST", "/api/management/clients", "/api/v1/management/clients"],
    ["POST", "/api/management/clients/rotate-secret", "/api/v1/management/clients/rotate-secret"],
  ])(
    "sends %s %s on as the browser wrote it, its secret answer never cached",
    async (method, path, managerPath) => {
      const { app, asked } = consoleWith(["admin-console"], () =>
        Response.json({ clientSecret: "tjm_cs_x" }, { status: 201 }),
      );
      const body = `{"client":"${CLIENT_ID}","graceSeconds":3600}`;
      const response = await app.request(path, { method, body });
      expect(response.status).toBe(201);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(await response.json()).toEqual({ clientSecret: "tjm_cs_x" });
      expect(asked[0]?.url).toBe(`${MANAGER}${managerPath}`);
      expect(await asked[0]?.text()).toBe(body);
    },
  );

  it("passes the Manager's refusal through, and ends the console session on its 401", async () => {
    const refusal = { code: "auth.reauthentication_required", message: "sign in again", maxAge: 300 };
    const refused = consoleWith(["admin-console"], () => Response.json(refusal, { status: 403 }));
    const response = await refused.app.request(`/api/management/clients/${CLIENT_ID}`, { method: "DELETE" });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual(refusal);

    const revoked = consoleWith(["admin-console"], () =>
      Response.json({ code: "auth.token_revoked" }, { status: 401 }),
    );
    const ended = await revoked.app.request("/api/management/clients");
    expect(ended.status).toBe(401);
    expect((await ended.json()).code).toBe("auth.session_missing");
    expect(revoked.ended).toHaveLength(1);
  });

  it("answers no route for a path outside client management (dot segments resolve before routing)", async () => {
    const { app, asked } = consoleWith(["admin-console"]);
    expect((await app.request(`/api/management/clients/${CLIENT_ID}/roles`)).status).toBe(404);
    expect((await app.request("/api/management/clientsx")).status).toBe(404);
    expect(
      (await app.request("/api/management/clients/%2e%2e/oauth-grants/x", { method: "DELETE" })).status,
    ).toBe(404);
    expect(
      (
        await app.request(`/api/management/clients/${CLIENT_ID}/oauth-grants/%2E`, {
          method: "PUT",
          body: "{}",
        })
      ).status,
    ).toBe(404);
    expect(asked).toEqual([]);
  });
});
