/**
 * The Admin console's error answers: its own in the Manager's one error body (statusCode,
 * error, message, code, requestId equal to its x-request-id), and the Manager's passed through
 * unchanged, naming the console's request id because the console sends it on.
 */
import { BrowserSession } from "@tjm/devstack/oidc-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestAdmin } from "./admin-harness.ts";

let admin: TestAdmin;
let browser: BrowserSession;

beforeAll(async () => {
  admin = await TestAdmin.start();
  ({ browser } = await admin.signIn(await admin.operator()));
});
afterAll(async () => {
  await admin?.close();
});

const consoleGet = (who: BrowserSession, path: string, requestId: string) =>
  who.fetch(`${admin.baseUrl}${path}`, { headers: { "x-request-id": requestId } });

async function expectConsoleError(response: Response, status: number, code: string, requestId: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("x-request-id")).toBe(requestId);
  const body = await response.json();
  expect(body).toStrictEqual({
    statusCode: status,
    error: expect.any(String),
    message: expect.any(String),
    code,
    requestId,
    ...(status === 400 ? { details: expect.any(Array) } : {}),
  });
  return body;
}

describe("the Manager's errors through the console", () => {
  it.each([
    ["a job id that is not a UUID (400)", "/jobs/not-a-uuid", 400, "validation.failed"],
    ["an unknown job (404)", `/jobs/${crypto.randomUUID()}`, 404, "job.not_found"],
  ])("passes %s through unchanged, under the console's request id", async (_, path, status, code) => {
    const requestId = `trace-${crypto.randomUUID()}`;
    const proxied = await consoleGet(browser, `/api/operations${path}`, requestId);
    const body = await expectConsoleError(proxied, status, code, requestId);
    const direct = await admin.manager.request(`/api/v1/operations${path}`, {
      headers: { "x-request-id": requestId },
    });
    expect(direct.status).toBe(status);
    expect(body).toStrictEqual(await direct.json());
  });
});

describe("the console's own errors", () => {
  it("refuses a cross-site unsafe request with request.cross_site", async () => {
    const response = await browser.fetch(`${admin.baseUrl}/api/operations/enrollment-tokens`, {
      method: "POST",
      headers: {
        origin: "https://elsewhere.example",
        "content-type": "application/json",
        "x-request-id": "trace-x",
      },
      body: "{}",
    });
    await expectConsoleError(response, 403, "request.cross_site", "trace-x");
  });

  it("refuses a same-origin unsafe request that is not JSON with request.json_required", async () => {
    const response = await browser.fetch(`${admin.baseUrl}/api/operations/enrollment-tokens`, {
      method: "POST",
      headers: { origin: admin.baseUrl, "content-type": "text/plain", "x-request-id": "trace-j" },
      body: "{}",
    });
    await expectConsoleError(response, 403, "request.json_required", "trace-j");
  });

  it("answers an invalid event filter with validation.failed and a coded detail per failure", async () => {
    const response = await consoleGet(browser, "/api/events?jobId=nope&kinds=job.updated,nothing", "trace-e");
    const body = await expectConsoleError(response, 400, "validation.failed", "trace-e");
    expect(body.details).toStrictEqual([
      { path: "kinds", message: expect.stringContaining('"nothing"'), code: "validation.invalid_value" },
      { path: "jobId", message: "must be a UUID", code: "validation.invalid_format" },
    ]);
  });

  it("answers an API request without a session with auth.session_missing", async () => {
    const response = await consoleGet(new BrowserSession(), "/api/operations/jobs", "trace-s");
    await expectConsoleError(response, 401, "auth.session_missing", "trace-s");
  });

  it("answers an unknown route with route.not_found, and makes a request id when none is sent", async () => {
    const response = await browser.fetch(`${admin.baseUrl}/api/nothing-here`);
    const requestId = response.headers.get("x-request-id") as string;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    await expectConsoleError(response, 404, "route.not_found", requestId);
  });
});
