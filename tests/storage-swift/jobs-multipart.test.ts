/**
 * Real agents under a multipart lease (S3_COMMIT=multipart) on Swift's s3api (swift-jobs.ts):
 * each output is uploaded at its destination key and left incomplete, the Manager completes
 * it. A Worker killed mid-upload continues the same upload; a cancel aborts it, so nothing
 * ever appears at the destination.
 */
import { access, readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listKeys } from "../harness/media-jobs.ts";
import {
  expectDelivered,
  incompleteUploads,
  jobMidUpload,
  manager,
  proxy,
  restartAgent,
  store,
  storedPartPuts,
  until,
  useSwiftJobs,
} from "./swift-jobs.ts";

// Long past a restart of the agent on a loaded machine: a Worker killed and back in time is not lost.
useSwiftJobs({ lostAfterMs: 30_000, commit: "multipart" });

describe("multipart commit with real agents on Swift s3api", () => {
  it("a Worker killed mid-upload at the destination continues the same upload; the Manager completes it", async () => {
    const { worker: first, jobId, attemptId, during: before } = await jobMidUpload("restarted", "direct", 2);
    // The upload is at the destination itself, and invisible there until completed.
    expect(before.key).toBe("direct/grain.mp4");
    expect(await first.process.stop("SIGKILL")).toMatchObject({ signal: "SIGKILL" });
    expect(await listKeys(store, "media-out", "direct/")).toEqual([]);

    proxy.limitUpload(undefined);
    const second = restartAgent(first, { LOG_LEVEL: "debug" });
    await second.waitForMessage("worker re-registered", 30_000);
    const done = await until(jobId, "COMPLETED");
    expect(done.attempts[0]).toMatchObject({ id: attemptId, state: "SUCCEEDED", encodingRecoveryCount: 0 });
    expect(second.logs.find((line) => line.msg === "resuming multipart upload")).toMatchObject({
      uploadId: before.uploadId,
      partsLost: 0,
    });
    // Every part stored once, and no copy: the object is the upload the first instance began.
    const puts = await storedPartPuts(before.uploadId);
    const partCount = Math.ceil(before.fileSize / before.partSize);
    expect([...puts].sort((a, b) => a - b)).toEqual(Array.from({ length: partCount }, (_, i) => i + 1));
    const { bytes } = await expectDelivered(jobId, "direct", attemptId);
    expect(bytes.length).toBe(before.fileSize);
    await second.stop();
  });

  it("cancel during an upload at the destination aborts it: no upload, no object", async () => {
    const { worker, jobId, attemptId, during } = await jobMidUpload("cancelled", "direct-cancel");
    expect(await incompleteUploads()).toEqual([
      { key: "direct-cancel/grain.mp4", uploadId: during.uploadId },
    ]);

    const response = await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
    expect(response.status).toBe(202);
    await until(jobId, "CANCELLED");
    await worker.process.waitForLog(
      (line) => line.msg === "attempt cancelled" && line.attemptId === attemptId,
    );
    expect(await incompleteUploads()).toEqual([]);
    expect(await listKeys(store, "media-out", "direct-cancel/")).toEqual([]);
    await expect(access(join(worker.workDir, attemptId))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readdir(join(worker.workDir, "attempts"))).toEqual([]);
    await worker.process.stop();
  });
});
