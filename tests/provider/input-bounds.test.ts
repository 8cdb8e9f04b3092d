/**
 * Inputs PostgreSQL cannot hold (NUL in text, a key past an index row) never reach it: a
 * client_id with NUL or of any length is an unknown client on every endpoint (the provider's
 * own OAuth error), a request parameter with NUL is an invalid_request, bytes that are not UTF-8
 * in the provider's own forms name nothing it knows, and the sign-in form refuses an e-mail
 * address no account can have with a 400 error page before anything is counted.
 */
import { randomBytes } from "node:crypto";
import { type PendingAuthorization, startAuthorization } from "@tjm/devstack/oidc-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSignInLimiter, storedKey } from "../../manager/src/identity/accounts/sign-in-limits.ts";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { createTestClient, resourceIndicator, type TestClient } from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";
import { authorizationRequest, postSignInForm } from "./provider-requests.ts";

let manager: TestManager;
let client: TestClient;

beforeAll(async () => {
  manager = await TestManager.start();
  client = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE] });
});
afterAll(() => manager?.close());

/** Text that does not compress (an index entry holds compressed text): random base64. */
function incompressible(length: number): string {
  return randomBytes(Math.ceil((length * 3) / 4))
    .toString("base64")
    .slice(0, length);
}

const hostileClientIds = {
  "with NUL": "admin\u0000console",
  "with a control character": "admin\u0007console",
  "of 3,000 characters": incompressible(3000),
};

function form(fields: Record<string, string>): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  };
}

describe.each(Object.entries(hostileClientIds))("a client_id %s", (_, clientId) => {
  it("is an unknown client at the authorization endpoint: a 400 error page", async () => {
    const response = await fetch(
      authorizationRequest(manager.issuerUrl, {
        client_id: clientId,
        response_type: "code",
        redirect_uri: client.redirectUri,
        scope: "openid",
      }),
    );
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await response.text()).toContain("invalid_client");
  });

  it("is an unknown client at the token endpoint: the provider's invalid_client", async () => {
    const response = await fetch(
      `${manager.issuerUrl}/token`,
      form({ grant_type: "authorization_code", client_id: clientId, code: "x", code_verifier: "y" }),
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: "invalid_client" });
  });

  it("is an unknown client at the end-session endpoint: a 400 error page", async () => {
    const response = await fetch(
      `${manager.issuerUrl}/session/end?client_id=${encodeURIComponent(clientId)}`,
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("invalid_client");
  });

  it("is an unknown client at revocation", async () => {
    const response = await fetch(
      `${manager.issuerUrl}/token/revocation`,
      form({ client_id: clientId, token: "x" }),
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: "invalid_client" });
  });
});

describe("request parameters the provider stores", () => {
  it("a state with NUL is an invalid_request, not a 500", async () => {
    const response = await fetch(
      authorizationRequest(manager.issuerUrl, {
        client_id: client.clientId,
        response_type: "code",
        redirect_uri: client.redirectUri,
        scope: "openid",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
        resource: resourceIndicator(ACCOUNT_PORTAL_AUDIENCE),
        state: "a\u0000b",
      }),
      { redirect: "manual" },
    );
    expect(response.status).toBeLessThan(500);
    // Sent back to the client as an error redirect, as the provider answers a bad parameter.
    const location = new URL(response.headers.get("location") ?? "", manager.issuerUrl);
    expect(location.searchParams.get("error")).toBe("invalid_request");
  });

  it("a presented token with NUL or of any length is not found", async () => {
    for (const token of ["a\u0000b", incompressible(5000)]) {
      // In the body: a header cannot carry NUL.
      const response = await fetch(`${manager.issuerUrl}/me`, form({ access_token: token }));
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: "invalid_token" });
    }
  });
});

describe("bytes that are not UTF-8 in the provider's own forms", () => {
  /**
   * oidc-provider parses its forms itself (node:querystring over a lenient UTF-8 decode): a
   * raw byte or a %XX that is not UTF-8 becomes U+FFFD. A value so changed names nothing it
   * knows (here a resource), and a parameter it does not read is ignored: nothing is stored
   * from it. TJM's strict decoding covers the JSON bodies of its own routes, not these forms.
   */
  const tokenRequest = async (extra: Uint8Array) => {
    const robot = await createTestClient(manager.sql, {
      resources: [ACCOUNT_PORTAL_AUDIENCE],
      grantTypes: ["client_credentials"],
    });
    const resource = encodeURIComponent(resourceIndicator(ACCOUNT_PORTAL_AUDIENCE));
    const response = await fetch(`${manager.issuerUrl}/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${btoa(`${robot.clientId}:${robot.clientSecret}`)}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new Uint8Array([...Buffer.from(`grant_type=client_credentials&resource=${resource}`), ...extra]),
    });
    return { status: response.status, body: await response.json() };
  };

  it("reads them as U+FFFD: a resource with 0xFF is one it does not know", async () => {
    for (const extra of [[0xff], [...Buffer.from("%FF")]]) {
      expect(await tokenRequest(new Uint8Array(extra))).toEqual({
        status: 400,
        body: {
          error: "invalid_target",
          error_description: expect.stringContaining(`${resourceIndicator(ACCOUNT_PORTAL_AUDIENCE)}\ufffd`),
        },
      });
    }
  });

  it("ignores a parameter it does not read, whatever its bytes", async () => {
    const answer = await tokenRequest(new Uint8Array([...Buffer.from("&note=a"), 0xed, 0xa0, 0x80]));
    expect(answer.status).toBe(200);
  });
});

describe("the sign-in form", () => {
  let pending: PendingAuthorization;
  beforeAll(async () => {
    pending = await startAuthorization({
      issuer: manager.issuerUrl,
      clientId: client.clientId,
      redirectUri: client.redirectUri,
      resource: resourceIndicator(ACCOUNT_PORTAL_AUDIENCE),
    });
  });

  const hostileEmails = {
    "with NUL": "someone\u0000@example.com",
    "with a control character": "someone\u001b@example.com",
    "of 255 characters": `${"a".repeat(243)}@example.com`,
    "of 3,000 characters": `${incompressible(2988)}@example.com`,
  };

  it.each(Object.entries(hostileEmails))(
    "refuses an e-mail address %s with a 400 error page",
    async (_, email) => {
      const failuresBefore = await manager.sql`select key from sign_in_failures where scope = 'account'`;
      const answer = await postSignInForm(pending, { email, password: "whatever it is" });
      expect(answer.status).toBe(400);
      expect(answer.html).toContain("invalid_request");
      // The page leads back to the form, which still works.
      expect(answer.html).toContain(`href="${new URL(pending.page?.url ?? "").pathname}"`);
      expect(await manager.sql`select key from sign_in_failures where scope = 'account'`).toHaveLength(
        failuresBefore.length,
      );
    },
  );

  it("refuses an e-mail address of 10 MB before it is counted (400, or 413 from a body limit)", async () => {
    const answer = await postSignInForm(pending, {
      email: `${incompressible(10_000_000)}@example.com`,
      password: "whatever it is",
    });
    expect([400, 413]).toContain(answer.status);
  });

  it("refuses a password longer than any the policy allows with a 400 error page", async () => {
    const answer = await postSignInForm(pending, {
      email: "someone@example.com",
      password: "p".repeat(1025),
    });
    expect(answer.status).toBe(400);
  });

  it("still answers a well-formed address of 254 characters as a wrong password", async () => {
    const answer = await postSignInForm(pending, {
      email: `${"a".repeat(242)}@example.com`,
      password: "whatever it is",
    });
    expect(answer.status).toBe(200);
  });
});

describe("the failure counter's key", () => {
  it("counts any client address, however long or whatever it holds, under a key an index row can hold", async () => {
    const limiter = createSignInLimiter(manager.sql, {
      accountLimit: 3,
      addressLimit: 100,
      windowSeconds: 60,
    });
    for (const address of [randomBytes(5_000).toString("hex"), "nul\u0000inside"]) {
      const first = await limiter.reserve({ email: "someone@example.com", address });
      expect(first.allowed).toBe(true);
      const [row] = await manager.sql<{ failures: number }[]>`
        select failures from sign_in_failures where scope = 'address' and key = ${storedKey(address)}`;
      expect(row?.failures).toBe(1);
    }
    expect(storedKey("someone@example.com")).toBe("someone@example.com");
  });

  it("refuses to count an e-mail address no account can have (the form answers 400 before)", async () => {
    const limiter = createSignInLimiter(manager.sql, {
      accountLimit: 3,
      addressLimit: 100,
      windowSeconds: 60,
    });
    for (const email of [
      `${randomBytes(5_000).toString("hex")}@example.com`,
      "nul\u0000inside@example.com",
    ]) {
      await expect(limiter.reserve({ email, address: "192.0.2.1" })).rejects.toThrow(/e-mail address/);
    }
  });
});
