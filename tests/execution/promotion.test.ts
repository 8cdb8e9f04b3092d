/**
 * A promotion cut half way: the store refuses the manifest write for a whole pass, after the
 * outputs were copied. The next pass writes the manifest and completes the job without
 * copying the outputs again: each destination is written once (the store's request log).
 * Found by the fault suite's storage-down scenario, where a cut at the manifest wrote every
 * output of the job twice.
 */
import { agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { putClip, startTestAgent, twoOutputPlan } from "../harness/media-jobs.ts";
import { type S3RequestLog, startS3RequestLog } from "../harness/s3-request-log.ts";

let s3: S3Server;
let store: S3RequestLog;
let manager: TestManager;
let scratch: Awaited<ReturnType<typeof agentDirs>>;

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  store = await startS3RequestLog(s3.port);
  manager = await TestManager.start({ storage: { ...s3.settings, endpoint: store.endpoint } });
  scratch = await agentDirs();
  await putClip(s3, { bucket: "media-in", key: "short.mp4" }, 1, "320x240");
  await startTestAgent(manager, scratch.root, "promotion");
}, 120_000);

afterAll(async () => {
  await killAgents();
  await manager?.close();
  await store?.close();
  await s3?.stop();
  await scratch?.cleanup();
});

describe("a promotion cut at the manifest", () => {
  it("resumes with the manifest and writes each output once", async () => {
    const { projectId } = await manager.createProject();
    const plan = twoOutputPlan("s3://media-in/short.mp4", "promotion");
    const manifestPath = "/media-out/promotion/manifest.json";
    // The promoter tries a storage request 3 times in a pass: refuse 3, so that pass fails.
    let refused = 0;
    store.intercept((request) => {
      if (request.method === "PUT" && request.path === manifestPath && refused < 3) {
        refused++;
        throw new Error("the store is away");
      }
    });
    const jobId = await manager.submitJob({ projectId, executionPlan: plan });
    const job = await manager.untilJob(jobId, "COMPLETED", { timeoutMs: 90_000 });
    expect(refused).toBe(3);
    expect(job.attempts).toHaveLength(1);
    for (const output of plan.outputs) {
      const path = output.destinationUri.slice("s3:/".length);
      const writes = store.writesTo(path);
      expect(writes, path).toHaveLength(1);
      expect(writes[0]?.copySource).toContain(`.tjm-staging/${jobId}/${job.attempts[0].id}/${output.id}`);
    }
    expect(store.writesTo(manifestPath)).toHaveLength(1);
  });
});
