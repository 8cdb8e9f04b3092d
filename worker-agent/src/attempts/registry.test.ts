/**
 * Slots: a cancelled attempt gives its slot back at once, before its clean-up and its last
 * report are done, as the Manager leases the next job to this Worker right after the cancel;
 * and after a restart, only the attempts the Manager kept are continued (the fault suite's
 * worker-killed scenario saw leases rejected for "no free slot" while a restarted Worker went
 * on with attempts the Manager had failed or completed, and jobs ran out of attempts so).
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@tjm/platform";
import { examples, type LeaseCommand } from "@tjm/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AttemptRecords } from "./records.ts";
import { AttemptRegistry } from "./registry.ts";

/** A loaded CI machine takes more than waitFor's default second to delete an attempt's files. */
const SLOW = { timeout: 10_000, interval: 20 };

const directories: string[] = [];

afterEach(async () => {
  await Promise.all(directories.splice(0).map((path) => rm(path, { recursive: true, force: true })));
});

/** A lease whose input sits on a store nobody answers: the attempt retries its reads of it until cancelled. */
function lease(attemptId: string): LeaseCommand {
  return {
    ...examples.commands.lease,
    attemptId,
    storage: { ...examples.commands.lease.storage, endpoint: "http://127.0.0.1:1" },
    // The registry's own (temporary) work directory.
    workDirectory: null,
    dispatchDeadline: new Date(Date.now() + 60_000).toISOString(),
  };
}

/**
 * What a previous instance left on disk for `attemptId`: its record, encoded, with no output, as
 * that agent wrote it ("paused" is how agents before the phase table wrote waiting_for_storage).
 */
async function leftBehind(
  workDir: string,
  attemptId: string,
  phase: "uploading" | "waiting_for_storage" | "paused",
): Promise<void> {
  const records = new AttemptRecords(workDir);
  await mkdir(join(workDir, "attempts"), { recursive: true });
  const record = {
    lease: lease(attemptId),
    directory: workDir,
    phase,
    outputs: [],
    logPath: records.logPath(attemptId),
  };
  await writeFile(records.path(attemptId), JSON.stringify(record), { mode: 0o600 });
}

async function registry(reports: string[], workDir?: string, acceptedHeld?: Promise<void>) {
  if (!workDir) {
    workDir = await mkdtemp(join(tmpdir(), "tjm-registry-"));
    directories.push(workDir);
  }
  return new AttemptRegistry({
    capacity: 1,
    workDir,
    isDraining: () => false,
    pool: "cpu",
    ffmpegPath: undefined,
    ffprobePath: undefined,
    records: new AttemptRecords(workDir),
    logger: silentLogger,
    // The last report of a cancelled attempt never gets through: its slot must not wait for it.
    report: async (command, type) => {
      reports.push(`${type} ${command.attemptId}`);
      if (type === "accepted") await acceptedHeld;
      if (type === "cancelled") await new Promise(() => {});
    },
    progress: () => {},
    storageRetry: { maxAttempts: 100, budgetMs: 60_000, initialDelayMs: 50, maxDelayMs: 50 },
  });
}

describe("the attempt registry's slots", () => {
  it("frees a cancelled attempt's slot at once, so the next lease is accepted", async () => {
    const reports: string[] = [];
    const attempts = await registry(reports);
    const first = crypto.randomUUID();
    const second = crypto.randomUUID();
    await attempts.lease(lease(first));
    expect(attempts.freeCapacity()).toBe(0);

    attempts.cancel({ ...examples.commands.cancel, attemptId: first });
    expect(attempts.freeCapacity()).toBe(1);
    await attempts.lease(lease(second));
    // The first attempt's own cancellation runs beside the next lease: its report may come first.
    expect(reports.filter((report) => /^(accepted|rejected) /.test(report))).toEqual([
      `accepted ${first}`,
      `accepted ${second}`,
    ]);
    attempts.cancel({ ...examples.commands.cancel, attemptId: second });
  });

  it("rejects a lease while its one slot is taken", async () => {
    const reports: string[] = [];
    const attempts = await registry(reports);
    const first = crypto.randomUUID();
    const second = crypto.randomUUID();
    await attempts.lease(lease(first));
    await attempts.lease(lease(second));
    expect(reports.filter((report) => !report.startsWith("started"))).toEqual([
      `accepted ${first}`,
      `rejected ${second}`,
    ]);
    attempts.cancel({ ...examples.commands.cancel, attemptId: first });
  });

  it("after a restart goes on only with the attempts the Manager kept, and drops the others' files", async () => {
    const workDir = await mkdtemp(join(tmpdir(), "tjm-registry-"));
    directories.push(workDir);
    const records = new AttemptRecords(workDir);
    const kept = crypto.randomUUID();
    const failedMeanwhile = crypto.randomUUID();
    for (const attemptId of [kept, failedMeanwhile]) {
      await leftBehind(workDir, attemptId, "paused");
    }
    const reports: string[] = [];
    const attempts = await registry(reports, workDir);
    expect((await attempts.restore()).map((offer) => offer.attemptId).sort()).toEqual(
      [kept, failedMeanwhile].sort(),
    );
    await attempts.keepRestored([kept]);
    attempts.startRestored();
    expect(attempts.active().map((held) => held.attemptId)).toEqual([kept]);
    expect((await records.list()).records.map((record) => record.lease.attemptId)).toEqual([kept]);
    expect(reports).toEqual([]);
    attempts.cancel({ ...examples.commands.cancel, attemptId: kept });
  });

  it("keeps every restored attempt when the Manager does not say which it kept", async () => {
    const workDir = await mkdtemp(join(tmpdir(), "tjm-registry-"));
    directories.push(workDir);
    const attemptId = crypto.randomUUID();
    await leftBehind(workDir, attemptId, "paused");
    const attempts = await registry([], workDir);
    await attempts.restore();
    await attempts.keepRestored(undefined);
    attempts.startRestored();
    expect(attempts.active().map((held) => held.attemptId)).toEqual([attemptId]);
    attempts.cancel({ ...examples.commands.cancel, attemptId });
  });

  it("holds the slot at once but starts the attempt once `accepted` is stored, keeps its reports in order, and a cancel meanwhile frees the slot", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reports: string[] = [];
    const workDir = await mkdtemp(join(tmpdir(), "tjm-registry-"));
    directories.push(workDir);
    const attempts = await registry(reports, workDir, held);
    const first = crypto.randomUUID();
    const second = crypto.randomUUID();
    const third = crypto.randomUUID();
    const accepting = attempts.lease(lease(first));
    await vi.waitFor(() => expect(reports).toEqual([`accepted ${first}`]), SLOW);
    expect(attempts.active().map((held) => held.attemptId)).toEqual([first]);
    expect(attempts.freeCapacity()).toBe(0);
    await attempts.lease(lease(second));
    attempts.cancel({ ...examples.commands.cancel, attemptId: first });
    expect(attempts.freeCapacity()).toBe(1);
    const next = attempts.lease(lease(third));
    // Nothing of the first attempt overtakes its `accepted`, which is still being stored.
    await vi.waitFor(
      () => expect(reports).toEqual([`accepted ${first}`, `rejected ${second}`, `accepted ${third}`]),
      SLOW,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(reports).toHaveLength(3);
    // Not started: an attempt's first step makes its directory (and keeps it while its input's store does not answer).
    expect(await readdir(workDir)).not.toContain(third);
    release();
    await Promise.all([accepting, next]);
    await vi.waitFor(async () => expect(await readdir(workDir)).toContain(third), SLOW);
    await vi.waitFor(() => expect(reports).toContain(`cancelled ${first}`), SLOW);
    const ofFirst = reports.filter((report) => report.endsWith(first)).map((report) => report.split(" ")[0]);
    expect(ofFirst[0]).toBe("accepted");
    expect(ofFirst.at(-1)).toBe("cancelled");
    attempts.cancel({ ...examples.commands.cancel, attemptId: third });
  });

  it("stops an attempt whose `accepted` is never stored without waiting for it", async () => {
    const reports: string[] = [];
    const attempts = await registry(reports, undefined, new Promise(() => {}));
    const attemptId = crypto.randomUUID();
    void attempts.lease(lease(attemptId));
    await vi.waitFor(() => expect(reports).toEqual([`accepted ${attemptId}`]), SLOW);
    await attempts.stop();
    expect(attempts.active()).toEqual([]);
  });

  it("resumes a restored paused attempt whose resume-uploads comes before the restored attempts start", async () => {
    const workDir = await mkdtemp(join(tmpdir(), "tjm-registry-"));
    directories.push(workDir);
    const attemptId = crypto.randomUUID();
    await leftBehind(workDir, attemptId, "waiting_for_storage");
    const reports: string[] = [];
    const attempts = await registry(reports, workDir);
    await attempts.restore();
    await attempts.keepRestored([attemptId]);
    attempts.resume({ ...examples.commands.resumeUploads, attemptId });
    attempts.startRestored();
    await vi.waitFor(() => expect(reports).toEqual([`upload-resumed ${attemptId}`]));
    expect(attempts.active().map((held) => held.attemptId)).toEqual([attemptId]);
    attempts.cancel({ ...examples.commands.cancel, attemptId });
  });

  it.each(["uploading", "waiting_for_storage", "paused"] as const)(
    "cancels a restored %s attempt whose cancel comes before the restored attempts start",
    async (phase) => {
      const workDir = await mkdtemp(join(tmpdir(), "tjm-registry-"));
      directories.push(workDir);
      const attemptId = crypto.randomUUID();
      await leftBehind(workDir, attemptId, phase);
      const reports: string[] = [];
      const attempts = await registry(reports, workDir);
      await attempts.restore();
      await attempts.keepRestored([attemptId]);
      attempts.cancel({ ...examples.commands.cancel, attemptId });
      attempts.startRestored();
      await vi.waitFor(() => expect(reports).toEqual([`cancelled ${attemptId}`]));
      expect(attempts.freeCapacity()).toBe(1);
    },
  );
});
