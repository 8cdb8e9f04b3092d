import { samplePlan, sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";

let manager: TestManager;
let projectId: string;
let organizationId: string;

beforeAll(async () => {
  manager = await TestManager.start();
  ({ projectId, organizationId } = await manager.createProject());
});
afterAll(() => manager?.close());

describe("POST /api/v1/operations/jobs", () => {
  it("stores a QUEUED job with attempt 1, a fencing token, the protocol version and a job.created announcement", async () => {
    const { data, response } = await manager.client().POST("/api/v1/operations/jobs", {
      body: sampleSubmission(projectId) as never,
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({
      organizationId,
      projectId,
      state: "QUEUED",
      priority: 0,
      workerPool: "cpu",
      requirements: { requiredCapabilities: [] },
      currentAttempt: { state: "CREATED", progress: 0 },
      startedAt: null,
      completedAt: null,
    });
    expect(data?.queuedAt).toEqual(expect.any(String));

    const [job] = await manager.sql`select * from jobs where id = ${data?.id ?? ""}`;
    expect(job).toMatchObject({ state: "QUEUED", protocolVersion: 3, lastFencingToken: "1" });
    const attempts = await manager.sql`select * from attempts where job_id = ${data?.id ?? ""}`;
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      id: data?.currentAttemptId,
      attemptNumber: 1,
      state: "CREATED",
      fencingToken: "1",
    });
    const outbox =
      await manager.sql`select kind, subject, payload from outbox where payload->>'jobId' = ${data?.id ?? ""}`;
    expect(outbox).toEqual([
      expect.objectContaining({
        kind: "job.created",
        subject: "events.job.created",
        payload: expect.objectContaining({ state: "QUEUED" }),
      }),
    ]);
  });

  it("normalises legacy H.264 names, fills defaults and strips unknown fields", async () => {
    const plan = samplePlan({ secret: "never echoed" }) as Record<string, unknown> & {
      outputs: Record<string, unknown>[];
    };
    plan.outputs = [
      { ...plan.outputs[0], video: { codec: "h264_nvenc", height: 480, extra: 1 }, unknown: true },
    ];
    const body = { ...sampleSubmission(projectId), executionPlan: plan, tenantHint: "x" };
    const submitted = await manager.request("/api/v1/operations/jobs", { method: "POST", json: body });
    expect(submitted.status).toBe(201);
    const summary = await submitted.json();
    expect(JSON.stringify(summary)).not.toContain("tenantHint");

    const detail = await (await manager.request(`/api/v1/operations/jobs/${summary.id}`)).json();
    expect(detail.executionPlan.outputs[0].video).toEqual({ codec: "h264", height: 480, preset: "medium" });
    expect(detail.executionPlan.transforms).toEqual({ removedSegments: [], subtitles: [], audioTracks: [] });
    expect(JSON.stringify(detail)).not.toMatch(/never echoed|unknown|extra/);
    const [stored] = await manager.sql`select execution_plan from jobs where id = ${summary.id}`;
    expect(stored?.executionPlan).toEqual(detail.executionPlan);
  });

  it("derives the pool from required capabilities", async () => {
    const cases: [string[], string][] = [
      [["h264_nvenc"], "nvidia"],
      [["cuda", "scale_cuda"], "nvidia"],
      [["h264_qsv"], "intel"],
      [["hevc_amf"], "amd"],
      [["libx264", "aac"], "cpu"],
      [[], "cpu"],
    ];
    for (const [requiredCapabilities, pool] of cases) {
      const response = await manager.request("/api/v1/operations/jobs", {
        method: "POST",
        json: sampleSubmission(projectId, { requirements: { requiredCapabilities } }),
      });
      expect(await response.json(), requiredCapabilities.join(",")).toMatchObject({ workerPool: pool });
    }
  });

  it("makes two jobs from the same body submitted twice", async () => {
    const body = sampleSubmission(projectId);
    const first = await (
      await manager.request("/api/v1/operations/jobs", { method: "POST", json: body })
    ).json();
    const second = await (
      await manager.request("/api/v1/operations/jobs", { method: "POST", json: body })
    ).json();
    expect(first.id).not.toBe(second.id);
  });

  it("answers 400 at projectId for a project that does not exist, storing nothing", async () => {
    const [{ count: before }] = (await manager.sql`select count(*)::int as count from jobs`) as unknown as [
      { count: number },
    ];
    const missing = crypto.randomUUID();
    const response = await manager.request("/api/v1/operations/jobs", {
      method: "POST",
      json: sampleSubmission(missing),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: "Validation failed",
      code: "validation.failed",
      requestId: response.headers.get("x-request-id"),
      details: [
        { path: "projectId", message: `project ${missing} does not exist`, code: "job.project_unknown" },
      ],
    });
    const [{ count: after }] = (await manager.sql`select count(*)::int as count from jobs`) as unknown as [
      { count: number },
    ];
    expect(after).toBe(before);
  });
});
