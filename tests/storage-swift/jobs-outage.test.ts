/**
 * Storage lost in the middle of an upload (WAITING_FOR_STORAGE, then resume or retention
 * expiry) and a zombie's late completion, on real agents with Swift's s3api as the store
 * (swift-jobs.ts).
 */
import { access, readdir } from "node:fs/promises";
import { join } from "node:path";
import { waitFor } from "@tjm/devstack/services";
import { createS3Client } from "@tjm/storage";
import { describe, expect, it } from "vitest";
import { MultipartUploader } from "../../worker-agent/src/storage/upload.ts";
import { readUploadState, type UploadState } from "../../worker-agent/src/storage/upload-state.ts";
import { listKeys, readObject, sha256 } from "../harness/media-jobs.ts";
import {
  agent,
  expectDelivered,
  expectDeliveredExceptZombie,
  freezer,
  incompleteUploads,
  job,
  jobMidUpload,
  manager,
  proxy,
  statePath,
  store,
  submit,
  swift,
  until,
  useSwiftJobs,
} from "./swift-jobs.ts";

// Short: the zombie test waits this long for its frozen Worker to be declared lost.
useSwiftJobs({ lostAfterMs: 6_000 });

describe("storage outages and zombies on Swift s3api", () => {
  it("storage killed mid-upload: WAITING_FOR_STORAGE; back and resumed, COMPLETED without re-encoding, one object, no upload left", async () => {
    const { worker, jobId, attemptId, during } = await jobMidUpload("outage", "outage");
    await swift.killProxy();
    const waiting = await until(jobId, "WAITING_FOR_STORAGE");
    expect(waiting.attempts[0]).toMatchObject({ id: attemptId, state: "WAITING_FOR_STORAGE" });

    proxy.limitUpload(undefined);
    await swift.startProxy();
    // Storage being back does not by itself resume: an operator (or the tenant) asks.
    expect((await job(jobId)).state).toBe("WAITING_FOR_STORAGE");
    const resumed = await manager.request(`/api/v1/operations/jobs/${jobId}/resume-uploads`, {
      method: "POST",
    });
    expect(resumed.status).toBe(202);
    const done = await until(jobId, "COMPLETED");
    expect(done.attempts).toHaveLength(1);
    expect(done.attempts[0]).toMatchObject({ encodingRecoveryCount: 0, uploadRecoveryCount: 1 });
    expect(
      worker.process.logs.filter((line) => line.msg === "encoding" && line.attemptId === attemptId),
    ).toHaveLength(1);
    // The upload that was under way when storage died was continued, not begun again.
    expect(worker.process.logs.find((line) => line.msg === "resuming multipart upload")).toMatchObject({
      uploadId: during.uploadId,
    });
    await expectDelivered(jobId, "outage", attemptId);
    await worker.process.stop();
  });

  it("storage killed while an MPEG-TS output uploads during the encode: the encode ends, WAITING_FOR_STORAGE; resumed, the same upload completes", async () => {
    // The input downloaded first: cutting storage must not cut the encode's input.
    const worker = await agent("outage-streamed", { WORKER_INPUT_STREAMING: "off" });
    const { jobId, attemptId } = await submit("outage-streamed", { container: "mpegts", preset: "fastest" });
    let growing: UploadState | undefined;
    await waitFor(
      "a part stored during the encode",
      async () => {
        const read = await readUploadState(statePath(worker.workDir, attemptId));
        growing =
          read.status === "ok" && read.state.growing && read.state.parts.length > 0 ? read.state : undefined;
        return growing !== undefined;
      },
      60_000,
      10,
    );
    await swift.killProxy();
    const waiting = await until(jobId, "WAITING_FOR_STORAGE");
    expect(waiting.attempts).toEqual([
      expect.objectContaining({ id: attemptId, state: "WAITING_FOR_STORAGE" }),
    ]);

    await swift.startProxy();
    const resumed = await manager.request(`/api/v1/operations/jobs/${jobId}/resume-uploads`, {
      method: "POST",
    });
    expect(resumed.status).toBe(202);
    const done = await until(jobId, "COMPLETED");
    expect(done.attempts).toEqual([expect.objectContaining({ id: attemptId, encodingRecoveryCount: 0 })]);
    expect(
      worker.process.logs.filter((line) => line.msg === "encoding" && line.attemptId === attemptId),
    ).toHaveLength(1);
    expect(worker.process.logs.find((line) => line.msg === "resuming multipart upload")).toMatchObject({
      uploadId: growing?.uploadId,
    });
    await expectDelivered(jobId, "outage-streamed", attemptId, "grain.ts");
    await worker.process.stop();
  });

  it("retention expiry of a waiting job: the Worker deletes its outputs and aborts the upload; FAILED UPLOAD_RETENTION_EXPIRED", async () => {
    const { worker, jobId, attemptId, during } = await jobMidUpload("expired", "expired");
    await swift.killProxy();
    await until(jobId, "WAITING_FOR_STORAGE");
    // The encoded output waits on the Worker's disk.
    const attemptDirectory = join(worker.workDir, attemptId);
    await access(attemptDirectory);
    // Storage came back, but nobody asked to resume before the retention ran out.
    proxy.limitUpload(undefined);
    await swift.startProxy();
    expect(await incompleteUploads()).toEqual([{ key: during.key, uploadId: during.uploadId }]);
    await manager.sql`update attempts set upload_pause_expires_at = now() where id = ${attemptId}`;

    const failed = await until(jobId, "FAILED");
    expect(failed.attempts).toEqual([
      expect.objectContaining({ id: attemptId, state: "FAILED", failureCode: "UPLOAD_RETENTION_EXPIRED" }),
    ]);
    await worker.process.waitForLog(
      (line) => line.msg === "attempt cancelled" && line.attemptId === attemptId,
    );
    expect(await incompleteUploads()).toEqual([]);
    expect(await listKeys(store, "media-out", "expired/")).toEqual([]);
    expect(await listKeys(store, "media-out", `.tjm-staging/${jobId}/`)).toEqual([]);
    await expect(access(attemptDirectory)).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readdir(join(worker.workDir, "attempts"))).toEqual([]);
    await worker.process.stop();
  });

  it("a zombie's late CompleteMultipartUpload lands under its own staging key and cannot replace the winner's object", async () => {
    const {
      worker: zombie,
      jobId,
      attemptId: lostAttemptId,
      during,
    } = await jobMidUpload("zombie", "zombie");
    // The whole host hangs mid-upload; the Manager declares it lost and the next attempt runs elsewhere.
    freezer.freeze(zombie.process.child.pid as number);
    proxy.limitUpload(undefined);
    const rescuer = await agent("rescuer");
    const done = await until(jobId, "COMPLETED");
    expect(done.attempts.map((a: { id: string; state: string }) => [a.id, a.state])).toEqual([
      [lostAttemptId, "FAILED"],
      [done.attempts[1].id, "SUCCEEDED"],
    ]);
    const winner = done.attempts[1].id as string;
    const { manifest, bytes: winnerBytes } = await expectDeliveredExceptZombie(jobId, "zombie", winner);

    // The zombie's upload finishes late, with the zombie's own uploader and state file: the
    // multipart upload it began for the lost attempt is completed now, after the winner's
    // promotion. Its key is the lost attempt's staging key, fixed by its lease.
    expect(during.key.startsWith(`.tjm-staging/${jobId}/${lostAttemptId}/`)).toBe(true);
    const lateClient = createS3Client(swift.settings);
    const late = await new MultipartUploader({
      client: lateClient,
      file: join(zombie.workDir, lostAttemptId, "output-grain.mp4"),
      uri: `s3://media-out/${during.key}`,
      statePath: statePath(zombie.workDir, lostAttemptId),
    }).upload();
    lateClient.destroy();
    expect(late.partsResumed).toBeGreaterThanOrEqual(1);
    expect(await listKeys(store, "media-out", `.tjm-staging/${jobId}/`)).toEqual([during.key]);
    // The destination and the manifest are still the winner's, byte for byte.
    const destination = await readObject(store, manifest.outputs[0].uri);
    expect(await sha256(destination)).toBe(await sha256(winnerBytes));
    expect(JSON.parse((await readObject(store, "s3://media-out/zombie/manifest.json")).toString())).toEqual(
      manifest,
    );

    // Thawed, the zombie finds the cancel the Manager queued for it; whatever it reports is stale.
    const staleBefore = manager.manager.execution.reports.counters.stale["not-current-attempt"] ?? 0;
    freezer.thaw(zombie.process.child.pid as number);
    await zombie.process.waitForLog(
      (line) => line.attemptId === lostAttemptId && /^attempt (cancelled|completed)$/.test(line.msg),
      30_000,
    );
    await waitFor(
      "the zombie's reports counted as stale",
      async () =>
        (manager.manager.execution.reports.counters.stale["not-current-attempt"] ?? 0) > staleBefore,
      15_000,
      50,
    );
    expect(await job(jobId)).toEqual(done);
    expect(await sha256(await readObject(store, manifest.outputs[0].uri))).toBe(await sha256(winnerBytes));
    expect(await incompleteUploads()).toEqual([]);
    await rescuer.process.stop();
    await zombie.process.stop();
  });
});
