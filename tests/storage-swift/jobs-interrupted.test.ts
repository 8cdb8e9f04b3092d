/**
 * A Worker killed in the middle of an upload, and a cancel in the middle of one, on real agents
 * with Swift's s3api as the store (swift-jobs.ts).
 */
import { access, readdir } from "node:fs/promises";
import { join } from "node:path";
import { ListPartsCommand } from "@aws-sdk/client-s3";
import { waitFor } from "@tjm/devstack/services";
import { describe, expect, it } from "vitest";
import { readUploadState, type UploadState } from "../../worker-agent/src/storage/upload-state.ts";
import { listKeys, readObject, sha256 } from "../harness/media-jobs.ts";
import {
  adminClient,
  agent,
  expectDelivered,
  freezer,
  incompleteUploads,
  jobMidUpload,
  manager,
  proxy,
  restartAgent,
  statePath,
  store,
  storedPartPuts,
  submit,
  until,
  useSwiftJobs,
} from "./swift-jobs.ts";

// Long past a restart of the agent on a loaded machine: a Worker killed and back in time is not lost.
useSwiftJobs({ lostAfterMs: 30_000 });

describe("uploads interrupted on Swift s3api", () => {
  it.each([
    ["mp4", "grain.mp4"],
    ["mpegts", "grain.ts"],
  ] as const)(
    "a Worker killed mid-upload of its %s output comes back and continues the same multipart upload: no part goes up twice",
    async (container, file) => {
      const {
        worker: first,
        jobId,
        attemptId,
        during: before,
      } = await jobMidUpload(`restarted-${container}`, `restart-${container}`, 2, container);
      expect(await first.process.stop("SIGKILL")).toMatchObject({ signal: "SIGKILL" });

      // What the store kept of the interrupted upload: at least the parts the state recorded.
      const kept = await adminClient().send(
        new ListPartsCommand({ Bucket: "media-out", Key: before.key, UploadId: before.uploadId }),
      );
      const keptNumbers = (kept.Parts ?? []).map((part) => part.PartNumber);
      expect(keptNumbers).toEqual(expect.arrayContaining(before.parts.map((part) => part.PartNumber)));
      expect(await incompleteUploads()).toEqual([{ key: before.key, uploadId: before.uploadId }]);

      // The same host again: no token, the same state and work directories.
      proxy.limitUpload(undefined);
      const second = restartAgent(first, { LOG_LEVEL: "debug" });
      await second.waitForMessage("worker re-registered", 30_000);
      const done = await until(jobId, "COMPLETED");
      expect(done.attempts).toHaveLength(1);
      expect(done.attempts[0]).toMatchObject({ id: attemptId, state: "SUCCEEDED", encodingRecoveryCount: 0 });
      const resumed = second.logs.find((line) => line.msg === "resuming multipart upload");
      expect(resumed).toMatchObject({ uploadId: before.uploadId, partsLost: 0 });
      expect(resumed?.partsStored).toBeGreaterThanOrEqual(before.parts.length);
      expect(second.logs.filter((line) => line.msg === "encoding")).toEqual([]);

      // Every part stored once: the new instance sent only the ones the store did not hold.
      const puts = await storedPartPuts(before.uploadId);
      const partCount = Math.ceil(before.fileSize / before.partSize);
      expect([...puts].sort((a, b) => a - b)).toEqual(Array.from({ length: partCount }, (_, i) => i + 1));
      const { bytes } = await expectDelivered(jobId, `restart-${container}`, attemptId, file);
      expect(bytes.length).toBe(before.fileSize);
      await second.stop();
    },
  );

  it("a Worker killed while its MPEG-TS output uploads during the encode: that upload is aborted, the next attempt delivers", async () => {
    const first = await agent("encoding-killed");
    const { jobId, attemptId } = await submit("streamed", { container: "mpegts", preset: "fastest" });
    const encoding = await first.process.waitForLog(
      (line) => line.msg === "encoding" && line.attemptId === attemptId,
      60_000,
    );
    // Parts stored while ffmpeg writes; ffmpeg then stopped, so the kill lands mid-encode.
    let growing: UploadState | undefined;
    await waitFor(
      "a part stored during the encode",
      async () => {
        const read = await readUploadState(statePath(first.workDir, attemptId));
        growing = read.status === "ok" && read.state.parts.length > 0 ? read.state : undefined;
        return growing !== undefined;
      },
      60_000,
      10,
    );
    freezer.freeze(encoding.pid as number);
    expect(await readUploadState(statePath(first.workDir, attemptId))).toMatchObject({
      status: "ok",
      state: { growing: true },
    });
    const before = growing as UploadState;
    expect(before.parts.map((part) => part.PartNumber)).not.toContain(1);
    expect(await first.process.stop("SIGKILL")).toMatchObject({ signal: "SIGKILL" });
    freezer.thaw(encoding.pid as number);
    process.kill(encoding.pid as number, "SIGKILL");
    expect(await incompleteUploads()).toEqual([{ key: before.key, uploadId: before.uploadId }]);

    // The same host again: the half-done encode is dropped and its upload aborted.
    const second = restartAgent(first);
    const done = await until(jobId, "COMPLETED", 90_000);
    expect(done.attempts.map((attempt: { state: string }) => attempt.state)).toEqual(["FAILED", "SUCCEEDED"]);
    expect(
      second.logs.find(
        (line) => line.msg === "discarding an attempt whose encode the previous instance did not finish",
      ),
    ).toMatchObject({ attemptId });
    const next = done.attempts[1] as { id: string };
    expect(
      second.logs.find(
        (line) => line.msg === "parts uploaded while the output was written" && line.attemptId === next.id,
      ),
    ).toMatchObject({ partsChanged: 0 });

    // One object, read back whole; no upload of either attempt left in the bucket.
    const manifest = JSON.parse(
      (await readObject(store, "s3://media-out/streamed/manifest.json")).toString(),
    );
    expect(manifest).toMatchObject({ jobId, attemptId: next.id });
    const bytes = await readObject(store, manifest.outputs[0].uri);
    expect(await sha256(bytes)).toBe(manifest.outputs[0].sha256);
    expect(await listKeys(store, "media-out", "streamed/")).toEqual([
      "streamed/grain.ts",
      "streamed/manifest.json",
    ]);
    expect(await incompleteUploads()).toEqual([]);
    await second.stop();
  });

  it("cancel during an upload aborts the multipart upload: none listed, no object anywhere", async () => {
    const { worker, jobId, attemptId, during } = await jobMidUpload("cancelled", "cancel");
    expect(await incompleteUploads()).toEqual([{ key: during.key, uploadId: during.uploadId }]);

    const response = await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
    expect(response.status).toBe(202);
    await until(jobId, "CANCELLED");
    await worker.process.waitForLog(
      (line) => line.msg === "attempt cancelled" && line.attemptId === attemptId,
    );
    expect(await incompleteUploads()).toEqual([]);
    expect(await listKeys(store, "media-out", "cancel/")).toEqual([]);
    expect(await listKeys(store, "media-out", `.tjm-staging/${jobId}/`)).toEqual([]);
    // The Worker kept nothing either: no output, no record, no upload state.
    await expect(access(join(worker.workDir, attemptId))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readdir(join(worker.workDir, "attempts"))).toEqual([]);
    await worker.process.stop();
  });
});
