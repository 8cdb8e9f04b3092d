import { request } from "node:http";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { createLogger } from "@tjm/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "./harness/manager.ts";

let manager: TestManager;
let projectId: string;

beforeAll(async () => {
  manager = await TestManager.start();
  ({ projectId } = await manager.createProject());
});
afterAll(() => manager?.close());

const JOBS = "/api/v1/operations/jobs";
const ONE_MIB = 1024 * 1024;

async function expectValidationError(
  response: Response,
  details: { path: string; message?: unknown; code: string }[],
): Promise<void> {
  expect(response.status).toBe(400);
  expect(await response.json()).toStrictEqual({
    statusCode: 400,
    error: "Bad Request",
    message: "Validation failed",
    code: "validation.failed",
    requestId: response.headers.get("x-request-id"),
    details: details.map((detail) => ({
      path: detail.path,
      message: detail.message ?? expect.any(String),
      code: detail.code,
    })),
  });
}

describe("unknown routes", () => {
  it.each([
    ["GET", "/api/v1/nothing-here"],
    ["GET", "/nothing-here"],
    ["GET", `${JOBS}/${crypto.randomUUID()}/nothing-here`],
    ["DELETE", JOBS],
  ])("%s %s answers 404 with the error body", async (method, path) => {
    const response = await manager.request(path, { method });
    expect(response.status).toBe(404);
    expect(await response.json()).toStrictEqual({
      statusCode: 404,
      error: "Not Found",
      message: `No route ${method} ${path}`,
      code: "route.not_found",
      requestId: response.headers.get("x-request-id"),
    });
  });
});

describe("job ids", () => {
  const routes: [string, string, (jobId: string) => string][] = [
    ["get", "GET", (jobId) => `${JOBS}/${jobId}`],
    ["cancel", "POST", (jobId) => `${JOBS}/${jobId}/cancel`],
    ["retry", "POST", (jobId) => `${JOBS}/${jobId}/retry`],
  ];

  it.each(routes)("%s answers 400 at jobId for an id that is not a UUID", async (_, method, path) => {
    const response = await manager.request(path("not-a-uuid"), { method });
    await expectValidationError(response, [
      { path: "jobId", message: "must be a UUID", code: "validation.invalid_format" },
    ]);
  });

  it.each(routes)("%s answers 404 for a job that does not exist", async (_, method, path) => {
    const jobId = crypto.randomUUID();
    const response = await manager.request(path(jobId), { method });
    expect(response.status).toBe(404);
    expect(await response.json()).toStrictEqual({
      statusCode: 404,
      error: "Not Found",
      message: `Job ${jobId} does not exist`,
      code: "job.not_found",
      requestId: response.headers.get("x-request-id"),
    });
  });
});

describe("request bodies", () => {
  it("answers 400 at body for malformed JSON, storing nothing", async () => {
    const [before] = await manager.sql`select count(*)::int as count from jobs`;
    const response = await manager.request(JOBS, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"projectId": "',
    });
    await expectValidationError(response, [{ path: "body", code: "validation.malformed_json" }]);
    const [after] = await manager.sql`select count(*)::int as count from jobs`;
    expect(after?.count).toBe(before?.count);
  });

  /** A job submission whose first output's id is "720p" followed by `bytes`, sent as they are. */
  const submissionWith = (bytes: number[]) => {
    const [before, after] = JSON.stringify(sampleSubmission(projectId)).split('"720p"') as [string, string];
    return Buffer.concat([Buffer.from(`${before}"720p`), Buffer.from(bytes), Buffer.from(`"${after}`)]);
  };
  const jobCount = async () => (await manager.sql`select count(*)::int as count from jobs`)[0]?.count;

  it.each([
    ["a byte that starts no character", [0xff]],
    ["a sequence cut short", [0xe2, 0x82]],
    ["an overlong form of /", [0xc0, 0xaf]],
    ["an encoded surrogate (CESU-8)", [0xed, 0xa0, 0x80]],
  ])("answers 400 at body for bytes that are not UTF-8 (%s), storing nothing", async (_, bytes) => {
    const before = await jobCount();
    const response = await manager.request(JOBS, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: submissionWith(bytes),
    });
    await expectValidationError(response, [{ path: "body", code: "validation.invalid_encoding" }]);
    expect(await jobCount()).toBe(before);
  });

  it("answers 400 at each string holding a lone surrogate, value or key, storing nothing", async () => {
    const before = await jobCount();
    const body = JSON.stringify(sampleSubmission(projectId, { "note\udc00": 1 })).replace(
      '"720p"',
      '"720p\\ud800"',
    );
    const response = await manager.request(JOBS, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    await expectValidationError(response, [
      { path: "executionPlan.outputs.0.id", code: "validation.lone_surrogate" },
      { path: "note\ufffd", code: "validation.lone_surrogate" },
    ]);
    expect(await jobCount()).toBe(before);
  });

  it.each([
    ["declared by content-length", true],
    ["streamed without content-length", false],
  ])("answers 413 to a body over 1 MiB %s", async (_, declareLength) => {
    const response = await postOversized(JOBS, ONE_MIB + 64 * 1024, declareLength);
    expect(response.status).toBe(413);
    expect(response.body).toStrictEqual({
      statusCode: 413,
      error: "Payload Too Large",
      message: `Request body exceeds ${ONE_MIB} bytes`,
      code: "request.body_too_large",
      requestId: response.requestId,
    });
  });

  it("keeps answering a client that reuses its connection after a 413", async () => {
    // fetch keeps the connection alive and sends the next request on it, as the SDK does.
    const tooLarge = await manager.request(JOBS, {
      method: "POST",
      json: sampleSubmission(projectId, { padding: "x".repeat(ONE_MIB) }),
    });
    expect(tooLarge.status).toBe(413);
    await tooLarge.text();
    const next = await manager.request(`${JOBS}?limit=1`);
    expect(next.status).toBe(200);
  });
});

/**
 * Sends `bytes` of JSON whitespace, chunked unless `declareLength`, on a connection of its
 * own. node:http rather than fetch: undici fails the whole call when the server answers
 * and stops reading before the body is sent.
 */
async function postOversized(
  path: string,
  bytes: number,
  declareLength: boolean,
): Promise<{ status: number; body: unknown; requestId: unknown }> {
  const token = await manager.issuer.token();
  const chunk = Buffer.alloc(64 * 1024, " ");
  const chunks = Math.ceil(bytes / chunk.length);
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = request(`${manager.baseUrl}${path}`, {
      method: "POST",
      agent: false,
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(declareLength ? { "content-length": String(chunks * chunk.length) } : {}),
      },
    });
    outgoing.on("response", async (incoming) => {
      answered = true;
      let text = "";
      for await (const part of incoming) text += part;
      resolve({
        status: incoming.statusCode ?? 0,
        body: JSON.parse(text),
        requestId: incoming.headers["x-request-id"],
      });
    });
    // Once the answer is in, the server may close the connection under the unsent rest.
    outgoing.on("error", (err) => {
      if (!answered) reject(err);
    });
    for (let sent = 0; sent < chunks; sent++) outgoing.write(chunk);
    outgoing.end();
  });
}

describe("headers on every answer", () => {
  const securityHeadersOf = (response: Response) => ({
    nosniff: response.headers.get("x-content-type-options"),
    csp: response.headers.get("content-security-policy"),
  });

  it.each([
    ["a JSON answer", "/api/health/live", {}],
    ["the OpenAPI document", "/api/v1/openapi.json", {}],
    ["a script of the API docs", "/api/docs/start.js", {}],
    ["a 400", `${JOBS}/not-a-uuid`, {}],
    ["a 401", JOBS, { authorization: "Bearer not-a-token" }],
    ["a 404", "/api/v1/nothing-here", {}],
  ])("%s: nosniff, and a CSP that allows nothing and no framing", async (_, path, headers) => {
    const response = await manager.request(path, { headers });
    await response.body?.cancel();
    expect(securityHeadersOf(response)).toEqual({
      nosniff: "nosniff",
      csp: "default-src 'none'; frame-ancestors 'none'",
    });
  });

  it("a page keeps its own CSP", async () => {
    const response = await manager.request("/api/docs");
    await response.body?.cancel();
    expect(securityHeadersOf(response)).toEqual({
      nosniff: "nosniff",
      csp: expect.stringContaining("script-src 'self'"),
    });
  });
});

describe("list queries", () => {
  it.each([
    ["limit=0", ["limit:validation.too_small"]],
    ["limit=101", ["limit:validation.too_big"]],
    ["limit=abc", ["limit:validation.invalid_format"]],
    ["limit=1.5", ["limit:validation.invalid_format"]],
    ["offset=-1", ["offset:validation.invalid_format"]],
    ["offset=100001", ["offset:validation.too_big"]],
    ["state=NOT_A_STATE", ["state:validation.invalid_value"]],
    ["workerPool=tpu", ["workerPool:validation.invalid_value"]],
    ["state=QUEUED&states=RUNNING", ["states:validation.custom"]],
    ["states=QUEUED,NOT_A_STATE", ["states.1:validation.invalid_value"]],
    ["states=QUEUED&states=NOT_A_STATE", ["states.1:validation.invalid_value"]],
    [
      "limit=0&offset=-1&state=NOPE",
      ["state:validation.invalid_value", "limit:validation.too_small", "offset:validation.invalid_format"],
    ],
  ])("?%s answers 400 at %j", async (query, failures) => {
    const response = await manager.request(`${JOBS}?${query}`);
    await expectValidationError(
      response,
      failures.map((failure) => {
        const [path = "", code = ""] = failure.split(":");
        return { path, code };
      }),
    );
  });
});

describe("request ids", () => {
  it("echoes a sane incoming x-request-id", async () => {
    const response = await manager.request("/api/health/live", {
      headers: { "x-request-id": "trace-42.a:b_c" },
    });
    expect(response.headers.get("x-request-id")).toBe("trace-42.a:b_c");
  });

  it.each([
    ["holds spaces", "two words"],
    ["holds markup", "<script>alert(1)</script>"],
    ["is over 128 characters", "a".repeat(129)],
  ])("replaces an incoming x-request-id that %s with a UUID", async (_, incoming) => {
    const response = await manager.request("/api/health/live", { headers: { "x-request-id": incoming } });
    expect(response.headers.get("x-request-id")).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it("is sent on error responses too", async () => {
    const notFound = await manager.request("/api/v1/nothing-here", {
      headers: { "x-request-id": "trace-404" },
    });
    expect(notFound.headers.get("x-request-id")).toBe("trace-404");
    const unauthorized = await manager.request(JOBS, {
      headers: { authorization: "Bearer garbage", "x-request-id": "trace-401" },
    });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("x-request-id")).toBe("trace-401");
    const invalid = await manager.request(`${JOBS}/not-a-uuid`, { headers: { "x-request-id": "trace-400" } });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("x-request-id")).toBe("trace-400");
  });
});

describe("unexpected failures", () => {
  let broken: TestManager;
  const logLines: string[] = [];

  beforeAll(async () => {
    broken = await TestManager.start({ logger: createLogger("error", (line) => logLines.push(line)) });
    // Submitting writes the job.created announcement to the outbox; without it the insert fails.
    await broken.sql`drop table outbox cascade`;
  });
  afterAll(() => broken?.close());

  it("answers 500 naming only the request id, which is also in the x-request-id header", async () => {
    const project = await broken.createProject();
    const response = await broken.request(JOBS, {
      method: "POST",
      json: sampleSubmission(project.projectId),
    });
    expect(response.status).toBe(500);
    const requestId = response.headers.get("x-request-id");
    expect(requestId).toEqual(expect.any(String));
    const text = await response.text();
    expect(JSON.parse(text)).toStrictEqual({
      statusCode: 500,
      error: "Internal Server Error",
      message: `Internal error (request id ${requestId})`,
      code: "internal.error",
      requestId,
    });
    expect(text).not.toMatch(/outbox|relation|does not exist|42P01|postgres|select|insert/i);
  });

  it("uses the caller's sane request id in the 500 and logs the failure in full under it", async () => {
    const project = await broken.createProject();
    const response = await broken.request(JOBS, {
      method: "POST",
      json: sampleSubmission(project.projectId),
      headers: { "x-request-id": "trace-500" },
    });
    expect(response.status).toBe(500);
    expect(response.headers.get("x-request-id")).toBe("trace-500");
    expect((await response.json()).message).toBe("Internal error (request id trace-500)");
    const logged = logLines.map((line) => JSON.parse(line)).find((entry) => entry.requestId === "trace-500");
    expect(logged).toMatchObject({ level: "error", msg: "unhandled error", method: "POST", path: JOBS });
    expect(JSON.stringify(logged?.err)).toMatch(/outbox/);
  });

  it("leaves no job behind when the announcement cannot be written", async () => {
    const project = await broken.createProject();
    await broken.request(JOBS, { method: "POST", json: sampleSubmission(project.projectId) });
    const [jobs] = await broken.sql`select count(*)::int as count from jobs`;
    const [attempts] = await broken.sql`select count(*)::int as count from attempts`;
    expect(jobs?.count).toBe(0);
    expect(attempts?.count).toBe(0);
  });
});
