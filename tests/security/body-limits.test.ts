/**
 * Bounded request bodies on every route of every process (issue 20, item 1), over a raw socket:
 * for each kind of route (the provider's sign-in and consent forms, the console's back-channel
 * logout and API proxy, the Manager's API) a declared Content-Length over the limit is answered
 * 413 before any body byte is sent, a chunked body after at most limit + 64 KiB, in the
 * process's one error body, and the connection is closed under the rest. The process's RSS
 * while up to 100 MB is pushed at the route is printed, not asserted (2 busy cores make RSS a
 * poor assertion). The provider's own endpoints keep their OAuth 400, and a sign-in from a
 * refused address is answered without its body being read. Also item 8: the console forwards a
 * body the Manager refuses (10,000 levels of nesting) and passes the Manager's answer on.
 */

import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { type BrowserSession, parseForms, startAuthorization } from "@tjm/devstack/oidc-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { type AdminInstance, TestAdmin } from "../admin/admin-harness.ts";
import { createTestAccount, createTestClient, resourceIndicator } from "../harness/identity.ts";
import { RawConnection } from "../harness/raw-http.ts";
import { postSignInForm } from "../provider/provider-requests.ts";

const KIB = 1024;
const MIB = 1024 * KIB;
const FORM_LIMIT = 16 * KIB;
const API_LIMIT = MIB;
/** How far past its limit a chunked body may get before the 413. */
const SLACK = 64 * KIB;
const FLOOD_BYTES = 100 * MIB;
/** Sign-in failures from one address before it is refused, low so a test reaches it quickly. */
const ADDRESS_LIMIT = 2;

let admin: TestAdmin;
/** A console process served as `npm run admin` serves it (the harness's first one reads back-channel bodies itself). */
let consoleApp: AdminInstance;
let operatorBrowser: BrowserSession;

beforeAll(async () => {
  admin = await TestAdmin.start({
    manager: {
      env: { TRUSTED_PROXY_ADDRESSES: "127.0.0.1", SIGN_IN_ADDRESS_FAILURE_LIMIT: String(ADDRESS_LIMIT) },
    },
  });
  consoleApp = await admin.startInstance();
  ({ browser: operatorBrowser } = await admin.signIn(await admin.operator()));
});
afterAll(() => admin?.close());

let nextAddress = 1;
/** A documentation-range client address of its own, so no test meets another's sign-in failures. */
const uniqueAddress = () => `192.0.2.${nextAddress++}`;

interface Target {
  /** Where the request goes: a process's base URL and the path. */
  baseUrl: string;
  path: string;
  headers: Record<string, string>;
}

interface RouteKind {
  name: string;
  limit: number;
  /** A request the route would read the body of (a live interaction, a session, a token …). */
  target(): Promise<Target>;
  /** The process's 413 body. */
  tooLarge: Record<string, unknown>;
}

const managerTooLarge = (limit: number) => ({
  statusCode: 413,
  error: "Payload Too Large",
  message: `Request body exceeds ${limit} bytes`,
  code: "request.body_too_large",
});
const consoleTooLarge = (limit: number) => ({
  statusCode: 413,
  error: "Payload Too Large",
  message: `the request body exceeds ${limit} bytes`,
  code: "request.body_too_large",
});

const FORM = "application/x-www-form-urlencoded";

/** A sign-in started by a client: the interaction's login page, its form and its cookies. */
async function signInPage(firstParty = true) {
  const client = await createTestClient(admin.manager.sql, {
    resources: [ACCOUNT_PORTAL_AUDIENCE],
    firstParty,
  });
  const pending = await startAuthorization({
    issuer: admin.manager.issuerUrl,
    clientId: client.clientId,
    redirectUri: client.redirectUri,
    resource: resourceIndicator(ACCOUNT_PORTAL_AUDIENCE),
  });
  const page = pending.page;
  if (!page) throw new Error("no sign-in page");
  const form = parseForms(page.html, page.url).find((candidate) => "password" in candidate.fields);
  if (!form) throw new Error("no sign-in form");
  return { pending, action: new URL(form.action) };
}

/** The provider's interaction form at `action` as the browser of `session` posts it. */
function formTarget(session: BrowserSession, action: URL): Target {
  return {
    baseUrl: action.origin,
    path: `${action.pathname}${action.search}`,
    headers: {
      "content-type": FORM,
      cookie: session.cookieHeader(action),
      "x-forwarded-for": uniqueAddress(),
    },
  };
}

/** Signed in to a client that asks for consent: the consent page's form. */
async function consentForm(): Promise<Target> {
  const { pending, action } = await signInPage(false);
  const account = await createTestAccount(admin.manager.sql);
  const signedIn = await postSignInForm(pending, account);
  let url = action;
  let location = signedIn.location;
  let html = signedIn.html;
  for (let hop = 0; location !== null && hop < 10; hop++) {
    url = new URL(location, url);
    const response = await pending.session.fetch(url);
    location = response.headers.get("location");
    html = await response.text();
  }
  const consent = parseForms(html, url).find((form) =>
    form.submits.some((button) => button.name === "decision"),
  );
  if (!consent) throw new Error(`no consent form: ${html.slice(0, 300)}`);
  return formTarget(pending.session, new URL(consent.action));
}

const routeKinds: RouteKind[] = [
  {
    name: "the provider's sign-in form (Manager)",
    limit: FORM_LIMIT,
    tooLarge: managerTooLarge(FORM_LIMIT),
    target: async () => {
      const { pending, action } = await signInPage();
      return formTarget(pending.session, action);
    },
  },
  {
    name: "the provider's consent form (Manager)",
    limit: FORM_LIMIT,
    tooLarge: managerTooLarge(FORM_LIMIT),
    target: consentForm,
  },
  {
    name: "the console's back-channel logout",
    limit: FORM_LIMIT,
    tooLarge: consoleTooLarge(FORM_LIMIT),
    target: async () => ({
      baseUrl: consoleApp.baseUrl,
      path: "/auth/backchannel-logout",
      headers: { "content-type": FORM },
    }),
  },
  {
    name: "the console's API proxy (a job submission)",
    limit: API_LIMIT,
    tooLarge: consoleTooLarge(API_LIMIT),
    target: async () => ({
      baseUrl: consoleApp.baseUrl,
      path: "/api/operations/jobs",
      headers: {
        "content-type": "application/json",
        origin: admin.baseUrl,
        cookie: operatorBrowser.cookieHeader(consoleApp.baseUrl),
      },
    }),
  },
  {
    name: "the Manager's API (a job submission)",
    limit: API_LIMIT,
    tooLarge: managerTooLarge(API_LIMIT),
    target: async () => ({
      baseUrl: admin.manager.baseUrl,
      path: "/api/v1/operations/jobs",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${await admin.manager.operatorToken()}`,
      },
    }),
  },
];

async function opened(target: Target, headers: Record<string, string>): Promise<RawConnection> {
  const connection = await RawConnection.open(target.baseUrl);
  await connection.head("POST", target.path, { ...target.headers, ...headers });
  return connection;
}

/** Body bytes of a form or of JSON whitespace: either keeps the route reading. */
const filler = (contentType: string, bytes: number) => Buffer.alloc(bytes, contentType === FORM ? "a" : " ");

const rssMiB = () => Math.round(process.memoryUsage().rss / MIB);

/** Pushes up to 100 MB as a chunked body until the server stops taking it; prints the RSS. */
async function flood(kind: RouteKind, target: Target): Promise<void> {
  const connection = await opened(target, { "transfer-encoding": "chunked" });
  const chunk = filler(target.headers["content-type"] ?? "", 64 * KIB);
  const before = rssMiB();
  const deadline = Date.now() + 20_000;
  while (connection.sent < FLOOD_BYTES && !connection.closed && Date.now() < deadline) {
    await connection.chunk(chunk);
  }
  const answer = await connection.answer(1000);
  console.log(
    `${kind.name}: ${Math.round(connection.sent / KIB)} KiB of a ${FLOOD_BYTES / MIB} MB chunked body handed to the socket before the server closed; answered ${answer?.status}; process RSS ${before} MiB before, ${rssMiB()} MiB after`,
  );
  connection.destroy();
}

describe.each(routeKinds)("$name", (kind) => {
  it("answers a declared Content-Length over the limit with 413 before any body byte is sent, and closes", async () => {
    const target = await kind.target();
    const connection = await opened(target, { "content-length": String(FLOOD_BYTES) });
    const answer = await connection.answer();
    expect(answer, "an answer with no body byte sent").toBeDefined();
    expect(connection.sent).toBe(0);
    expect(answer?.status).toBe(413);
    expect(JSON.parse(answer?.body ?? "null")).toMatchObject({
      ...kind.tooLarge,
      requestId: answer?.headers["x-request-id"],
    });
    expect(answer?.headers["content-type"]).toMatch(/^application\/json/);
    expect(await connection.closedWithin(2000), "the connection closed after the 413").toBe(true);
    connection.destroy();
  });

  it("answers a chunked body with 413 after at most limit + 64 KiB, and closes", async () => {
    const target = await kind.target();
    const connection = await opened(target, { "transfer-encoding": "chunked" });
    const chunk = filler(target.headers["content-type"] ?? "", 16 * KIB);
    while (connection.sent + chunk.length <= kind.limit + SLACK && !connection.answered) {
      await connection.chunk(chunk);
    }
    const answer = await connection.answer();
    expect(answer, `an answer after ${connection.sent} bytes of an unfinished body`).toBeDefined();
    expect(connection.sentBeforeAnswer).toBeLessThanOrEqual(kind.limit + SLACK);
    expect(answer?.status).toBe(413);
    expect(JSON.parse(answer?.body ?? "null")).toMatchObject({
      ...kind.tooLarge,
      requestId: answer?.headers["x-request-id"],
    });
    expect(await connection.closedWithin(2000), "the connection closed after the 413").toBe(true);
    connection.destroy();

    await flood(kind, await kind.target());
  });
});

describe("the provider's own endpoints (/oidc/*)", () => {
  const token = () => ({
    baseUrl: admin.manager.baseUrl,
    path: "/oidc/token",
    headers: { "content-type": FORM },
  });

  it("keep their OAuth 400 for a declared Content-Length over their limit", async () => {
    const connection = await opened(token(), { "content-length": String(FLOOD_BYTES) });
    const answer = await connection.answer();
    expect(connection.sent).toBe(0);
    expect(answer?.status).toBe(400);
    expect(JSON.parse(answer?.body ?? "null")).toMatchObject({ error: "invalid_request" });
    connection.destroy();
  });

  it("keep their OAuth 400 for a chunked body over their limit", async () => {
    const connection = await opened(token(), { "transfer-encoding": "chunked" });
    const chunk = filler(FORM, 16 * KIB);
    while (connection.sent + chunk.length <= 56 * KIB + SLACK && !connection.answered) {
      await connection.chunk(chunk);
    }
    const answer = await connection.answer();
    expect(answer?.status).toBe(400);
    expect(JSON.parse(answer?.body ?? "null")).toMatchObject({ error: "invalid_request" });
    connection.destroy();
  });
});

describe("a sign-in from a refused address", () => {
  it("is answered 429 without its body being read", async () => {
    const { pending, action } = await signInPage();
    const target = formTarget(pending.session, action);
    const address = target.headers["x-forwarded-for"] as string;
    const account = await createTestAccount(admin.manager.sql);
    for (let attempt = 0; attempt <= ADDRESS_LIMIT; attempt++) {
      const response = await pending.session.fetch(action, {
        method: "POST",
        headers: { "content-type": FORM, "x-forwarded-for": address },
        body: new URLSearchParams({ email: account.email, password: `wrong ${attempt}` }),
      });
      await response.text();
    }

    const connection = await opened(target, { "content-length": "1000" });
    const answer = await connection.answer();
    expect(answer, "an answer with no body byte sent").toBeDefined();
    expect(connection.sent).toBe(0);
    expect(answer?.status).toBe(429);
    expect(await connection.closedWithin(2000), "the connection closed under the unread body").toBe(true);
    connection.destroy();
  });
});

describe("a body the console forwards", () => {
  const DEPTH = 10_000;
  const submission = JSON.stringify(sampleSubmission(crypto.randomUUID()));
  const bodies: [string, string | Uint8Array<ArrayBuffer>][] = [
    ["10,000 nested arrays", `${"[".repeat(DEPTH)}${"]".repeat(DEPTH)}`],
    ["10,000 nested objects", `${'{"a":'.repeat(DEPTH)}1${"}".repeat(DEPTH)}`],
    [
      "a submission with 10,000 levels in its plan",
      JSON.stringify({ ...sampleSubmission(crypto.randomUUID()), executionPlan: "PLAN" }).replace(
        '"PLAN"',
        `${'{"outputs":'.repeat(DEPTH)}[]${"}".repeat(DEPTH)}`,
      ),
    ],
    ["not JSON", '{"projectId": '],
    // Refused by the console itself, in the Manager's words: read leniently, it would reach the Manager as U+FFFD.
    ["bytes that are not UTF-8", new Uint8Array([...Buffer.from(submission.slice(0, -1)), 0xff, 0x7d])],
    ["a lone surrogate", submission.replace('"720p"', '"720p\\ud800"')],
  ];

  it.each(bodies)("%s gets the Manager's own answer, passed on unchanged", async (_, body) => {
    const direct = await fetch(`${admin.manager.baseUrl}/api/v1/operations/jobs`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${await admin.manager.operatorToken()}`,
      },
      body,
    });
    const directBody = await direct.text();
    expect(direct.status).toBe(400);

    const forwarded = await operatorBrowser.fetch(`${consoleApp.baseUrl}/api/operations/jobs`, {
      method: "POST",
      headers: { origin: admin.baseUrl, "content-type": "application/json" },
      body,
    });
    expect(forwarded.status).toBe(400);
    // The request id is each request's own.
    const withoutRequestId = (text: string) => ({ ...JSON.parse(text), requestId: undefined });
    expect(withoutRequestId(await forwarded.text())).toStrictEqual(withoutRequestId(directBody));
  });
});
