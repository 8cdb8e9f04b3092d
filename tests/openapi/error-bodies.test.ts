/**
 * Walks the OpenAPI document's error responses: for each operation and each error status it
 * documents, provokes that status from a real Manager and checks the body is exactly the one
 * error body (statusCode, error, message, code, requestId; details with codes on a 400), with
 * a `code` the operation documents for that status and the request id of the x-request-id
 * header. The statuses not provoked here are listed, each with where it is proven.
 */
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE, ADMIN_CONSOLE_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { ResponseValidators } from "../fuzz/invariants.ts";
import { type OpenApiDocument, type Operation, operationsOf, pointerEscape } from "../fuzz/operations.ts";
import { createTestAccount, createTestClient, resourceIndicator, signInAs } from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

const document = JSON.parse(
  readFileSync(new URL("../../openapi/openapi.json", import.meta.url), "utf8"),
) as OpenApiDocument & { components: { schemas: Record<string, Record<string, unknown>> } };
const operations = operationsOf(document);
const validators = new ResponseValidators(document);
const ONE_MIB = 1024 * 1024;

/** Statuses no request of this file provokes, and where they are proven instead. */
const NOT_PROVOKED: Record<string, string> = {
  "* 500": "an unexpected failure: tests/errors.test.ts breaks the database under a Manager",
  "* 503": "a dependency down: tests/security/auth.test.ts (issuer keys), tests/database/outage.test.ts",
  "POST /api/v1/worker/registrations 403":
    "an enrollment token for another pool: tests/workers/registration.test.ts",
  "POST /api/v1/worker/registrations 409":
    "a public key registered twice: tests/workers/registration.test.ts",
  "POST /api/v1/worker/challenges 403": "a disabled Worker: tests/workers",
  "POST /api/v1/worker/re-registrations 401": "a wrong signature from a registered Worker: tests/workers",
  "POST /api/v1/worker/re-registrations 403": "a disabled Worker: tests/workers",
  "POST /api/v1/worker/re-registrations 409": "a Worker of another pool: tests/workers",
  "POST /api/v1/worker/credentials 401": "a wrong signature from a registered Worker: tests/workers",
  "POST /api/v1/worker/credentials 403": "a disabled Worker: tests/workers",
  "POST /api/v1/worker/credentials 409": "a superseded instance: tests/workers",
  "POST /api/v1/authentication/recovery/code-challenges 429":
    "a recovery limit reached, alike for every identifier: tests/authentication/recovery.test.ts",
  "POST /api/v1/authentication/recovery/code-verifications 429":
    "codes typed past the limit across challenges: tests/authentication/recovery.test.ts",
  "POST /api/v1/authentication/recovery/password-resets 429":
    "resets from one address past RECOVERY_RESET_ADDRESS_LIMIT: tests/authentication/recovery.test.ts",
  "POST /api/v1/operations/workers/{workerId}/undrain 409":
    "a Worker that is not draining: tests/workers/operations.test.ts",
  "POST /api/v1/me/profile/avatar-upload-urls 429":
    "an 11th upload URL in an hour: tests/account/profile.test.ts",
  "GET /api/v1/me 400": "no parameter or body to be invalid; every route's 400 is the one body proven here",
  "PATCH /api/v1/me/identifiers 409": "another account's address: tests/account/security.test.ts",
  "POST /api/v1/me/identifiers/verifications 409":
    "spent tries, and two accounts racing for one address: tests/account/security.test.ts",
  "POST /api/v1/me/password 429": "the account's sign-in limit: tests/account/security.test.ts",
  // Account routes without a path, query or body: nothing of theirs can be invalid.
  "GET /api/v1/me/sessions 400": "no input: the route's validation is the other account routes'",
  "POST /api/v1/me/sessions/revoke-others 400":
    "no input: the route's validation is the other account routes'",
  "GET /api/v1/me/accounts 400": "no input: the route's validation is the other account routes'",
  "POST /api/v1/me/logout/all 400": "no input: the route's validation is the other account routes'",
  "GET /api/v1/me/connected-apps 400": "no input: the route's validation is the other account routes'",
  "DELETE /api/v1/me 400": "no input: the route's validation is the other account routes'",
  "GET /api/v1/me/security/mfa 400": "no input: the route's validation is the other account routes'",
  "POST /api/v1/me/security/mfa/totp 400": "no input: the route's validation is the other account routes'",
  "POST /api/v1/me/security/mfa/sms 400": "no input: the route's validation is the other account routes'",
  "POST /api/v1/me/security/mfa/email 400": "no input: the route's validation is the other account routes'",
  "POST /api/v1/me/security/mfa/recovery-codes/regeneration 400":
    "no input: the route's validation is the other account routes'",
  "POST /api/v1/me/security/mfa/recovery-codes/regeneration 409":
    "an account without a factor: tests/account/mfa.test.ts",
  "POST /api/v1/me/security/mfa/totp 409": "a second TOTP factor: tests/account/mfa.test.ts",
  "POST /api/v1/me/security/mfa/sms 409": "no verified phone: tests/account/mfa.test.ts (its e-mail twin)",
  "POST /api/v1/me/security/mfa/email 409": "an unverified address: tests/account/mfa.test.ts",
  "POST /api/v1/me/security/mfa/sms 429":
    "past MFA_CODE_SENDS_PER_HOUR: tests/account/mfa.test.ts (its e-mail twin)",
  "POST /api/v1/me/security/mfa/email 429": "past MFA_CODE_SENDS_PER_HOUR: tests/account/mfa.test.ts",
  "POST /api/v1/me/security/mfa/totp/verification 409":
    "spent tries: the identifier verification's twin in tests/account/security.test.ts",
  "POST /api/v1/me/security/mfa/sms/verification 409":
    "spent tries: the identifier verification's twin in tests/account/security.test.ts",
  "POST /api/v1/me/security/mfa/email/verification 409":
    "spent tries: the identifier verification's twin in tests/account/security.test.ts",
  "GET /api/v1/me/developer-apps 400": "no input: the route's validation is the other account routes'",
  "POST /api/v1/me/developer-apps/{client}/rotate-secret 409":
    "a public client's rotation, the same domain call: tests/management/clients.test.ts",
};

let manager: TestManager;
let projectId: string;
let operatorToken: string;
let tenantToken: string;
let accountToken: string;
let clientAdminToken: string;
/** A public client: it has no secret to rotate (409). */
let publicClientId: string;
let queuedJobId: string;
let completedJobId: string;

beforeAll(async () => {
  manager = await TestManager.start();
  ({ projectId } = await manager.createProject());
  operatorToken = await manager.operatorToken();
  tenantToken = await manager.tenantToken([projectId]);
  const account = await createTestAccount(manager.sql);
  const portalClient = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE] });
  accountToken = (
    await signInAs(manager.issuerUrl, portalClient, account, resourceIndicator(ACCOUNT_PORTAL_AUDIENCE))
  ).accessToken;
  const admin = await createTestAccount(manager.sql, { roles: ["client-admin"] });
  const consoleClient = await createTestClient(manager.sql, { resources: [ADMIN_CONSOLE_AUDIENCE] });
  clientAdminToken = (
    await signInAs(manager.issuerUrl, consoleClient, admin, resourceIndicator(ADMIN_CONSOLE_AUDIENCE))
  ).accessToken;
  publicClientId = consoleClient.clientId;
  queuedJobId = await manager.submitJob(sampleSubmission(projectId));
  completedJobId = await manager.submitJob(sampleSubmission(projectId));
  await manager.forceJobState(completedJobId, "COMPLETED", "SUCCEEDED");
});
afterAll(() => manager?.close());

const isTenant = (operation: Operation) => operation.security.includes("tenantBearer");
const isAccount = (operation: Operation) => operation.security.includes("accountBearer");
const isClientAdmin = (operation: Operation) => operation.security.includes("clientAdminBearer");
const ownToken = (operation: Operation) =>
  isTenant(operation)
    ? tenantToken
    : isAccount(operation)
      ? accountToken
      : isClientAdmin(operation)
        ? clientAdminToken
        : operatorToken;
/** A valid token of another audience. */
const otherToken = (operation: Operation) =>
  isTenant(operation) || isAccount(operation) || isClientAdmin(operation) ? operatorToken : tenantToken;

interface Call {
  path?: Record<string, string>;
  query?: string;
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The operation's path with every path parameter set (a fresh UUID unless `call.path` names it). */
function urlOf(operation: Operation, call: Call): string {
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (call.path?.[name] !== undefined) return call.path[name];
    // A parameter of a few known values (a role, a directory source) gets its first one.
    const known = (
      operation.parameters.find((p) => p.in === "path" && p.name === name)?.schema as { enum?: string[] }
    )?.enum?.[0];
    if (known !== undefined) return known;
    return name === "projectId" ? projectId : crypto.randomUUID();
  });
  return `${path}${call.query ? `?${call.query}` : ""}`;
}

/** The documented example body, so a request fails only for the reason a provocation picks. */
function exampleBody(operation: Operation): unknown {
  const media = operation.requestBody?.content["application/json"];
  if (media?.example !== undefined) return media.example;
  const ref = media?.schema?.$ref;
  const name = typeof ref === "string" ? ref.split("/").pop() : undefined;
  return name ? document.components.schemas[name]?.example : undefined;
}

function send(operation: Operation, call: Call): Promise<Response> {
  const headers = new Headers(call.headers);
  const token = call.token === undefined ? ownToken(operation) : call.token;
  if (token !== null && operation.security.length > 0) headers.set("authorization", `Bearer ${token}`);
  let body: string | undefined;
  if (operation.requestBody) {
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
    body = JSON.stringify(call.body === undefined ? (exampleBody(operation) ?? {}) : call.body);
  }
  return fetch(`${manager.baseUrl}${urlOf(operation, call)}`, { method: operation.method, headers, body });
}

/**
 * A request that declares a body over the limit and sends none of it: the 413 comes from the
 * header alone. node:http rather than fetch, which will not send a GET with a length.
 */
function oversized(operation: Operation): Promise<Response> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${manager.baseUrl}${urlOf(operation, {})}`, {
      method: operation.method,
      agent: false,
      headers: {
        "content-type": "application/json",
        "content-length": String(ONE_MIB + 1),
        ...(operation.security.length > 0 ? { authorization: `Bearer ${ownToken(operation)}` } : {}),
      },
    });
    outgoing.on("response", async (incoming) => {
      let text = "";
      for await (const part of incoming) text += part;
      const headers = new Headers();
      for (const [name, value] of Object.entries(incoming.headers)) {
        if (typeof value === "string") headers.set(name, value);
      }
      resolve(new Response(text, { status: incoming.statusCode ?? 0, headers }));
      outgoing.destroy();
    });
    outgoing.on("error", reject);
    outgoing.flushHeaders();
  });
}

const uuidParams = (operation: Operation) =>
  operation.parameters.filter((p) => p.in === "path" && p.schema.format === "uuid").map((p) => p.name);

/** A request of `operation` that should answer `status` with `code`, or none that can here. */
type Provocation = { code: string; send: () => Promise<Response> };

function provocations(operation: Operation, status: string): Provocation[] {
  const secured = operation.security.length > 0;
  const jobRoute = operation.path.includes("{jobId}");
  switch (status) {
    case "400": {
      if (NOT_PROVOKED[`${operation.label} 400`] !== undefined) return [];
      const params = uuidParams(operation);
      if (params.length > 0) {
        const path = Object.fromEntries(params.map((name) => [name, "not-a-uuid"]));
        return [{ code: "validation.failed", send: () => send(operation, { path }) }];
      }
      const bounded = operation.parameters.filter(
        (p) => p.in === "path" && typeof (p.schema as { maxLength?: unknown }).maxLength === "number",
      );
      if (bounded.length > 0) {
        const path = Object.fromEntries(
          bounded.map((p) => [p.name, "x".repeat((p.schema as { maxLength: number }).maxLength + 1)]),
        );
        return [{ code: "validation.failed", send: () => send(operation, { path }) }];
      }
      if (operation.requestBody)
        return [{ code: "validation.failed", send: () => send(operation, { body: [] }) }];
      // A route without input (several account routes) has nothing to make invalid.
      if (!operation.parameters.some((p) => p.in === "query")) return [];
      const query = operation.parameters.find((p) => p.in === "query" && p.name === "limit")
        ? "limit=0"
        : operation.parameters.some((p) => p.in === "query" && p.name === "v")
          ? `v=${"x".repeat(101)}`
          : operation.parameters.some((p) => p.in === "query" && p.name === "jobId")
            ? "jobId=not-a-uuid"
            : "connectivity=NOT_A_VALUE";
      return [{ code: "validation.failed", send: () => send(operation, { query }) }];
    }
    case "401":
      if (operation.path === "/api/v1/worker/registrations") {
        return [{ code: "enrollment.token_invalid", send: () => send(operation, {}) }];
      }
      if (!secured) return [];
      return [
        { code: "auth.token_missing", send: () => send(operation, { token: null }) },
        { code: "auth.token_invalid", send: () => send(operation, { token: "garbage" }) },
      ];
    case "403":
      if (!secured) return [];
      return [
        { code: "auth.audience_missing", send: () => send(operation, { token: otherToken(operation) }) },
        ...(isTenant(operation)
          ? [
              {
                code: "auth.project_forbidden",
                send: () => send(operation, { path: { projectId: crypto.randomUUID(), jobId: queuedJobId } }),
              },
            ]
          : []),
      ];
    case "404":
      return [
        {
          code: operation.path.endsWith("/avatar")
            ? "avatar.not_found"
            : operation.path.includes("/attempts/")
              ? "job.attempt_not_found"
              : operation.path.startsWith("/api/v1/me/identifiers")
                ? "identifier.change_not_found"
                : operation.path === "/api/v1/me/security/mfa/{factor_id}"
                  ? "mfa.factor_not_found"
                  : operation.path.startsWith("/api/v1/me/security/mfa/")
                    ? "mfa.enrolment_not_found"
                    : operation.path.startsWith("/api/v1/me/sessions/")
                      ? "session.not_found"
                      : operation.path.startsWith("/api/v1/me/connected-apps/")
                        ? "session.client_not_found"
                        : operation.path.startsWith("/api/v1/management/clients") ||
                            operation.path.startsWith("/api/v1/me/developer-apps/")
                          ? "client.not_found"
                          : jobRoute
                            ? "job.not_found"
                            : "worker.not_found",
          send: () => send(operation, { body: exampleBody(operation) }),
        },
      ];
    case "409": {
      if (operation.path.endsWith("/cancel"))
        return [
          { code: "job.not_cancellable", send: () => send(operation, { path: { jobId: completedJobId } }) },
        ];
      if (operation.path.endsWith("/retry"))
        return [{ code: "job.not_retryable", send: () => send(operation, { path: { jobId: queuedJobId } }) }];
      if (operation.path === "/api/v1/management/clients/rotate-secret")
        return [
          {
            code: "client.public_without_secret",
            send: () => send(operation, { body: { client: publicClientId } }),
          },
        ];
      if (operation.path.endsWith("/resume-uploads"))
        return [{ code: "job.not_resumable", send: () => send(operation, { path: { jobId: queuedJobId } }) }];
      return [];
    }
    case "413":
      return [{ code: "request.body_too_large", send: () => oversized(operation) }];
    case "415":
      return [
        {
          code: "request.unsupported_media_type",
          send: () => send(operation, { headers: { "content-type": "text/plain" } }),
        },
      ];
    default:
      return [];
  }
}

const BODY_KEYS = ["code", "error", "message", "requestId", "statusCode"];
const DETAIL_KEYS = ["code", "message", "path"];
const detailCodes = (document.components.schemas.ErrorDetail as { properties: { code: { enum: string[] } } })
  .properties.code.enum;

/** The codes the document lists for this status of this operation. */
function documentedCodes(operation: Operation, status: string): string[] {
  const schema = operation.responses[status]?.content?.["application/json"]?.schema as Record<
    string,
    unknown
  >;
  if (schema.$ref === "#/components/schemas/ValidationError") return ["validation.failed"];
  const narrowed = (schema.allOf as { properties?: { code?: { enum?: string[] } } }[] | undefined)?.[1];
  return narrowed?.properties?.code?.enum ?? [];
}

async function expectErrorBody(operation: Operation, status: string, response: Response, code: string) {
  const text = await response.text();
  expect(response.status, text).toBe(Number(status));
  const body = JSON.parse(text);
  expect(Object.keys(body).sort()).toStrictEqual(
    status === "400" ? [...BODY_KEYS, "details"].sort() : BODY_KEYS,
  );
  expect(body.statusCode).toBe(Number(status));
  expect(body.requestId).toBe(response.headers.get("x-request-id"));
  expect(documentedCodes(operation, status)).toContain(body.code);
  expect(body.code).toBe(code);
  if (status === "400") {
    expect(body.details.length).toBeGreaterThan(0);
    for (const detail of body.details) {
      expect(Object.keys(detail).sort()).toStrictEqual(DETAIL_KEYS);
      expect(detailCodes).toContain(detail.code);
    }
  }
  const validate = validators.validator(
    `${operation.pointer}/responses/${status}/content/${pointerEscape("application/json")}/schema`,
  );
  expect(validate(body), validators.errorsText(validate)).toBe(true);
}

const cases = operations.flatMap((operation) =>
  Object.keys(operation.responses)
    .filter((status) => Number(status) >= 400)
    .map((status) => ({ operation, status, label: `${operation.label} ${status}` })),
);

describe("every documented error response", () => {
  const unprovoked: string[] = [];

  it.each(cases)("$label answers the one error body", async ({ operation, status, label }) => {
    const planned = provocations(operation, status);
    if (planned.length === 0) {
      unprovoked.push(label);
      return;
    }
    for (const provocation of planned) {
      await expectErrorBody(operation, status, await provocation.send(), provocation.code);
    }
  });

  it("leaves unprovoked only the statuses listed with where they are proven", () => {
    const expected = cases
      .map((c) => c.label)
      .filter((label) => NOT_PROVOKED[label] !== undefined || /\s(500|503)$/.test(label));
    expect(unprovoked.sort()).toStrictEqual(expected.sort());
  });
});

describe("answers outside the document", () => {
  it("answers an unknown route with route.not_found and the request id", async () => {
    const response = await fetch(`${manager.baseUrl}/api/v1/nothing-here`, {
      headers: { "x-request-id": "trace-7" },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toStrictEqual({
      statusCode: 404,
      error: "Not Found",
      message: "No route GET /api/v1/nothing-here",
      code: "route.not_found",
      requestId: "trace-7",
    });
  });

  it("codes every failure of a 400: a missing field, a bad format, a number out of range", async () => {
    const response = await manager.request("/api/v1/operations/jobs", {
      method: "POST",
      json: { ...sampleSubmission("not-a-uuid"), priority: 5000, executionPlan: undefined },
    });
    const body = await response.json();
    expect(body.code).toBe("validation.failed");
    expect(body.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "projectId", code: "validation.invalid_format" }),
        expect.objectContaining({ path: "priority", code: "validation.too_big" }),
        expect.objectContaining({ path: "executionPlan", code: "validation.required" }),
      ]),
    );
  });
});
