/**
 * WAITING_FOR_STORAGE from the Manager's side, driven by a protocol-level Worker: the pause,
 * both resume-uploads routes (operator, and tenant with a provider token's project claim),
 * every 409, and retention expiry.
 */

import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { TENANT_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";

let manager: TestManager;
let worker: ProtocolWorker;
let projectId: string;

beforeAll(async () => {
  manager = await TestManager.start({ heartbeatIntervalMs: 200, lostAfterMs: 5000 });
  ({ projectId } = await manager.createProject());
  worker = await ProtocolWorker.start(manager);
});
afterAll(async () => {
  await worker?.stop();
  await manager?.close();
});

/** How this file polls a job: every 25 ms for up to 10 s. */
const POLL = { timeoutMs: 10_000, pollMs: 25 };

/** A job whose attempt reported upload-paused: WAITING_FOR_STORAGE. */
async function waitingJob() {
  const jobId = await manager.submitJob(sampleSubmission(projectId));
  const lease = await worker.nextLease(jobId);
  await worker.report("accepted", lease);
  await worker.report("encoded", lease);
  await worker.report("upload-paused", lease, {
    reason: "connect ECONNREFUSED 127.0.0.1:9000 after 5 tries",
    pausedAt: new Date().toISOString(),
  });
  await manager.untilJob(jobId, "WAITING_FOR_STORAGE", POLL);
  return { jobId, lease };
}

describe("WAITING_FOR_STORAGE", () => {
  it("records the first pause and a retention of 24 h, bounded by the job deadline", async () => {
    const { jobId } = await waitingJob();
    const attempt = (await manager.job(jobId)).attempts[0];
    expect(attempt.state).toBe("WAITING_FOR_STORAGE");
    expect(Date.parse(attempt.uploadPauseExpiresAt) - Date.parse(attempt.uploadPausedAt)).toBe(
      24 * 3600 * 1000,
    );
  });

  it("operator resume-uploads: 202, the Worker is told, same attempt; its report makes the job RUNNING", async () => {
    const { jobId, lease } = await waitingJob();
    const response = await manager.request(`/api/v1/operations/jobs/${jobId}/resume-uploads`, {
      method: "POST",
    });
    expect(response.status).toBe(202);
    const detail = await response.json();
    expect(detail.state).toBe("WAITING_FOR_STORAGE");
    expect(detail.attempts).toHaveLength(1);
    expect(detail.attempts[0]).toMatchObject({ uploadRecoveryCount: 1, encodingRecoveryCount: 0 });
    expect(detail.attempts[0].uploadResumeRequestedAt).not.toBeNull();
    const command = await worker.nextCommand("resume-uploads", lease.attemptId);
    expect(command.fencingToken).toBe(lease.fencingToken);

    await worker.report("upload-resumed", lease);
    await manager.untilJob(jobId, "RUNNING", POLL);
    // A second pause keeps the first pause's retention: it is never renewed.
    const firstExpiry = (await manager.job(jobId)).attempts[0].uploadPauseExpiresAt;
    await worker.report("upload-paused", lease, {
      reason: "503 SlowDown",
      pausedAt: new Date().toISOString(),
    });
    await manager.untilJob(jobId, "WAITING_FOR_STORAGE", { ...POLL, what: "waiting again" });
    expect((await manager.job(jobId)).attempts[0].uploadPauseExpiresAt).toBe(firstExpiry);
  });

  it.each<[string, (jobId: string) => Promise<void>, RegExp]>([
    ["a job that is not waiting", async () => {}, /Only a job WAITING_FOR_STORAGE/],
    [
      "expired retention",
      async (jobId) => {
        await manager.sql`update attempts set upload_pause_expires_at = now() - interval '1 second' where job_id = ${jobId}`;
      },
      /retention has expired/,
    ],
    [
      "a passed job deadline",
      async (jobId) => {
        await manager.sql`update jobs set deadline_at = now() - interval '1 second' where id = ${jobId}`;
      },
      /deadline has passed/,
    ],
  ])("resume-uploads refuses %s with 409", async (name, prepare, message) => {
    // Sweeps would fail an expired job before the route sees it: hold them off for this check.
    const { jobId } = name === "a job that is not waiting" ? await running() : await waitingJob();
    await manager.manager.execution.sweeper.stop();
    try {
      await prepare(jobId);
      const response = await manager.request(`/api/v1/operations/jobs/${jobId}/resume-uploads`, {
        method: "POST",
      });
      expect(response.status).toBe(409);
      expect((await response.json()).message).toMatch(message);
    } finally {
      manager.manager.execution.sweeper.start();
    }
  });

  it("refuses when the Worker holding the outputs was disabled", async () => {
    const keeper = await ProtocolWorker.start(manager);
    worker.stopHeartbeats();
    try {
      const jobId = await manager.submitJob(sampleSubmission(projectId));
      const lease = await keeper.nextLease(jobId);
      await keeper.report("accepted", lease);
      await keeper.report("upload-paused", lease, { reason: "timeout", pausedAt: new Date().toISOString() });
      await manager.untilJob(jobId, "WAITING_FOR_STORAGE", POLL);
      await manager.request(`/api/v1/operations/workers/${keeper.workerId}/disable`, { method: "POST" });
      // Disabling fails what the Worker holds; the job moved on to its next attempt.
      const detail = await manager.job(jobId);
      expect(detail.attempts[0]).toMatchObject({ state: "FAILED", failureCode: "WORKER_DISABLED" });
      const response = await manager.request(`/api/v1/operations/jobs/${jobId}/resume-uploads`, {
        method: "POST",
      });
      expect(response.status).toBe(409);
    } finally {
      worker.startHeartbeats(200);
      await keeper.stop();
    }
  });

  it("on retention expiry the attempt fails UPLOAD_RETENTION_EXPIRED and the Worker is told to delete the files", async () => {
    const { jobId, lease } = await waitingJob();
    await manager.sql`update attempts set upload_pause_expires_at = now() where job_id = ${jobId}`;
    await manager.untilJob(jobId, "FAILED", POLL);
    expect((await manager.job(jobId)).attempts).toEqual([
      expect.objectContaining({ state: "FAILED", failureCode: "UPLOAD_RETENTION_EXPIRED" }),
    ]);
    await worker.nextCommand("cancel", lease.attemptId);
  });
});

async function running() {
  const jobId = await manager.submitJob(sampleSubmission(projectId));
  const lease = await worker.nextLease(jobId);
  await worker.report("accepted", lease);
  await manager.untilJob(jobId, "RUNNING", POLL);
  return { jobId, lease };
}

describe("the tenant route", () => {
  const path = (project: string, jobId: string) => `/api/v1/projects/${project}/jobs/${jobId}/resume-uploads`;
  const resume = (project: string, jobId: string, token?: string) =>
    fetch(`${manager.baseUrl}${path(project, jobId)}`, {
      method: "POST",
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });

  it("resumes with a provider token of a client bound to the project, whose tjm_projects claim lists it", async () => {
    const token = await manager.tenantToken([projectId]);
    expect(decodeJwt(token)).toMatchObject({
      iss: manager.issuerUrl,
      aud: TENANT_AUDIENCE,
      tjm_projects: [projectId],
    });
    const { jobId } = await waitingJob();
    const response = await resume(projectId, jobId, token);
    expect(response.status).toBe(202);
    expect((await response.json()).attempts[0].uploadResumeRequestedAt).not.toBeNull();
  });

  it("403 for a client bound to another project or to none, or without the tenant audience; 401 without a token", async () => {
    const { jobId } = await waitingJob();
    const { projectId: other } = await manager.createProject();
    for (const token of [
      await manager.tenantToken([other]),
      await manager.tenantToken([]),
      await manager.operatorToken(),
    ]) {
      expect((await resume(projectId, jobId, token)).status).toBe(403);
    }
    expect((await resume(projectId, jobId)).status).toBe(401);
    expect((await manager.job(jobId)).attempts[0].uploadResumeRequestedAt).toBeNull();
  });

  it("401 for a token of the harness's own (external operator) issuer, whatever its claim grants", async () => {
    const { jobId } = await waitingJob();
    const token = await manager.issuer.token({
      audience: TENANT_AUDIENCE,
      claims: { tjm_projects: [projectId] },
    });
    const response = await resume(projectId, jobId, token);
    expect(response.status).toBe(401);
    expect((await response.json()).message).toMatch(/trusted for the operations audience only/);
    expect((await manager.job(jobId)).attempts[0].uploadResumeRequestedAt).toBeNull();
  });

  it("404 when the job is not in that project; 400 for malformed ids", async () => {
    const { jobId } = await waitingJob();
    const { projectId: otherProject } = await manager.createProject();
    const response = await resume(otherProject, jobId, await manager.tenantToken([otherProject]));
    expect(response.status).toBe(404);
    const malformed = await resume("nope", "nope", await manager.tenantToken([projectId]));
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).details.map((d: { path: string }) => d.path).sort()).toEqual([
      "jobId",
      "projectId",
    ]);
  });
});
