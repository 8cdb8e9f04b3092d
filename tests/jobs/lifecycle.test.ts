import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";

let manager: TestManager;
let projectId: string;

beforeAll(async () => {
  manager = await TestManager.start();
  ({ projectId } = await manager.createProject());
});
afterAll(() => manager?.close());

async function submit(overrides: Record<string, unknown> = {}) {
  const response = await manager.request("/api/v1/operations/jobs", {
    method: "POST",
    json: sampleSubmission(projectId, overrides),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; currentAttemptId: string };
}

const post = (path: string) => manager.request(path, { method: "POST" });

describe("GET /api/v1/operations/jobs/:jobId", () => {
  it("returns the plan and every attempt with the spec's fields, and nothing secret", async () => {
    const job = await submit();
    const response = await manager.request(`/api/v1/operations/jobs/${job.id}`);
    expect(response.status).toBe(200);
    const detail = await response.json();
    expect(detail.executionPlan.input.uri).toBe("s3://media-in/movies/42/source.mov");
    expect(detail.attempts).toEqual([
      {
        id: job.currentAttemptId,
        attemptNumber: 1,
        state: "CREATED",
        progress: 0,
        workerId: null,
        startedAt: null,
        endedAt: null,
        failureCode: null,
        failureMessage: null,
        logsUri: null,
        encodingRecoveryCount: 0,
        uploadRecoveryCount: 0,
        uploadPausedAt: null,
        uploadPauseExpiresAt: null,
        uploadResumeRequestedAt: null,
        waitingForInput: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    ]);
    expect(JSON.stringify(detail)).not.toMatch(/fencing|multipart|uploadId|secret|password/i);
  });
});

describe("the outbox relay's wake-up", () => {
  it("is rung after each successful write and not after reads or refusals", async () => {
    const before = manager.outboxWrites.count;
    const job = await submit();
    await manager.request(`/api/v1/operations/jobs/${job.id}`);
    await post(`/api/v1/operations/jobs/${job.id}/retry`);
    await post(`/api/v1/operations/jobs/${job.id}/cancel`);
    expect(manager.outboxWrites.count - before).toBe(2);
  });
});

describe("POST /api/v1/operations/jobs/:jobId/cancel", () => {
  it("cancels a QUEUED job at once and announces it", async () => {
    const job = await submit();
    const response = await post(`/api/v1/operations/jobs/${job.id}/cancel`);
    expect(response.status).toBe(202);
    const detail = await response.json();
    expect(detail).toMatchObject({
      state: "CANCELLED",
      currentAttempt: { state: "CANCELLED" },
      completedAt: null,
    });
    expect(detail.attempts).toHaveLength(1);
    const kinds = await manager.sql`select kind from outbox where payload->>'jobId' = ${job.id} order by id`;
    expect(kinds.map((row) => row.kind)).toEqual(["job.created", "job.updated"]);
  });

  it("is idempotent for CANCELLED and CANCEL_REQUESTED jobs: 202, nothing changes", async () => {
    const cancelled = await submit();
    await post(`/api/v1/operations/jobs/${cancelled.id}/cancel`);
    const before = await (await manager.request(`/api/v1/operations/jobs/${cancelled.id}`)).json();
    const again = await post(`/api/v1/operations/jobs/${cancelled.id}/cancel`);
    expect(again.status).toBe(202);
    expect(await again.json()).toEqual(before);

    const requested = await submit();
    await manager.forceJobState(requested.id, "CANCEL_REQUESTED", "RUNNING");
    const response = await post(`/api/v1/operations/jobs/${requested.id}/cancel`);
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ state: "CANCEL_REQUESTED" });
    const events =
      await manager.sql`select kind from outbox where payload->>'jobId' = ${cancelled.id} or payload->>'jobId' = ${requested.id}`;
    expect(events.map((row) => row.kind).sort()).toEqual(["job.created", "job.created", "job.updated"]);
  });

  it("asks the Worker holding a RUNNING job: CANCEL_REQUESTED", async () => {
    const job = await submit();
    await manager.forceJobState(job.id, "RUNNING", "RUNNING");
    const response = await post(`/api/v1/operations/jobs/${job.id}/cancel`);
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({
      state: "CANCEL_REQUESTED",
      currentAttempt: { state: "RUNNING" },
    });
  });

  it.each([
    ["COMPLETED", "SUCCEEDED"],
    ["FAILED", "FAILED"],
  ])("refuses a %s job with 409", async (state, attemptState) => {
    const job = await submit();
    await manager.forceJobState(job.id, state, attemptState);
    const response = await post(`/api/v1/operations/jobs/${job.id}/cancel`);
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({
      statusCode: 409,
      error: "Conflict",
      message: `Job is ${state} and can no longer be cancelled`,
      code: "job.not_cancellable",
      requestId: response.headers.get("x-request-id"),
    });
    const [row] = await manager.sql`select state from jobs where id = ${job.id}`;
    expect(row?.state).toBe(state);
  });
});

describe("POST /api/v1/operations/jobs/:jobId/retry", () => {
  it("gives a FAILED job a new attempt with the next number and fencing token, back in QUEUED", async () => {
    const job = await submit();
    await manager.forceJobState(job.id, "FAILED", "FAILED");
    const response = await post(`/api/v1/operations/jobs/${job.id}/retry`);
    expect(response.status).toBe(202);
    const detail = await response.json();
    expect(detail).toMatchObject({
      state: "QUEUED",
      startedAt: null,
      completedAt: null,
      currentAttempt: { state: "CREATED", progress: 0 },
    });
    expect(
      detail.attempts.map((a: { attemptNumber: number; state: string }) => [a.attemptNumber, a.state]),
    ).toEqual([
      [1, "FAILED"],
      [2, "CREATED"],
    ]);
    expect(detail.currentAttemptId).toBe(detail.attempts[1].id);
    const tokens =
      await manager.sql`select attempt_number, fencing_token from attempts where job_id = ${job.id} order by attempt_number`;
    expect(tokens.map((row) => [row.attemptNumber, row.fencingToken])).toEqual([
      [1, "1"],
      [2, "2"],
    ]);
    const events = await manager.sql`select kind from outbox where payload->>'jobId' = ${job.id} order by id`;
    expect(events.map((row) => row.kind)).toEqual(["job.created", "job.updated"]);
  });

  it.each([
    ["QUEUED", "CREATED"],
    ["RUNNING", "RUNNING"],
    ["CANCEL_REQUESTED", "RUNNING"],
    ["CANCELLED", "CANCELLED"],
    ["COMPLETED", "SUCCEEDED"],
    ["WAITING_FOR_STORAGE", "WAITING_FOR_STORAGE"],
  ])("refuses a %s job with 409", async (state, attemptState) => {
    const job = await submit();
    await manager.forceJobState(job.id, state, attemptState);
    const response = await post(`/api/v1/operations/jobs/${job.id}/retry`);
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({
      statusCode: 409,
      error: "Conflict",
      message: `Only a FAILED job can be retried; this job is ${state}`,
      code: "job.not_retryable",
      requestId: response.headers.get("x-request-id"),
    });
    const attempts = await manager.sql`select count(*)::int as n from attempts where job_id = ${job.id}`;
    expect(attempts[0]?.n).toBe(1);
  });
});

describe.each(["get", "cancel", "retry"])("%s with a bad job id", (operation) => {
  const path = (id: string) =>
    operation === "get" ? `/api/v1/operations/jobs/${id}` : `/api/v1/operations/jobs/${id}/${operation}`;
  const call = (id: string) => manager.request(path(id), { method: operation === "get" ? "GET" : "POST" });

  it("answers 400 at path jobId for a non-UUID", async () => {
    const response = await call("not-a-uuid");
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: "Validation failed",
      code: "validation.failed",
      requestId: response.headers.get("x-request-id"),
      details: [{ path: "jobId", message: "must be a UUID", code: "validation.invalid_format" }],
    });
  });

  it("answers 404 for an unknown job", async () => {
    const id = crypto.randomUUID();
    const response = await call(id);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      statusCode: 404,
      error: "Not Found",
      message: `Job ${id} does not exist`,
      code: "job.not_found",
      requestId: response.headers.get("x-request-id"),
    });
  });
});
