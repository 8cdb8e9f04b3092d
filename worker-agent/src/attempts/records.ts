/**
 * What the Worker keeps on disk about each attempt it holds, so a restarted instance can tell
 * the Manager which attempts it can still finish (encoded outputs waiting to be uploaded) and
 * carry on. One JSON file per attempt under WORKER_WORK_DIR/attempts, written atomically with
 * mode 0600: the lease in it carries storage credentials.
 */
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { type LeaseCommand, LeaseCommandSchema } from "@tjm/protocol";
import { z } from "zod";
import { writeFileAtomic } from "../platform/atomic-file.ts";
import { KeyedSequence } from "../platform/keyed-sequence.ts";
import { ATTEMPT_PHASES } from "./phases.ts";

/** An encoded file; what it holds is probed while it uploads, so a record carries only where it is. */
export const ENCODED_OUTPUT = z.object({
  id: z.string(),
  path: z.string(),
});
export type EncodedOutput = z.infer<typeof ENCODED_OUTPUT>;

const RecordSchema = z.object({
  lease: LeaseCommandSchema,
  /** Where the attempt's files live (the lease's workDirectory or WORKER_WORK_DIR). */
  directory: z.string(),
  /**
   * The attempt's phase (phases.ts): in uploading and waiting_for_storage the outputs below are
   * complete; in any other, nothing is worth keeping. "paused" is how agents before the phase
   * table wrote waiting_for_storage.
   */
  phase: z.preprocess(
    (phase) => (phase === "paused" ? "waiting_for_storage" : phase),
    z.enum(ATTEMPT_PHASES),
  ),
  outputs: z.array(ENCODED_OUTPUT),
  logPath: z.string(),
});
export type AttemptRecord = z.infer<typeof RecordSchema>;

export class AttemptRecords {
  /** One attempt's saves and removals land in call order: the accept path does not await its save. */
  private readonly writes = new KeyedSequence();

  constructor(private readonly workDir: string) {}

  private get dir(): string {
    return join(this.workDir, "attempts");
  }

  path(attemptId: string): string {
    return join(this.dir, `${attemptId}.json`);
  }

  /** The attempt's ffmpeg log (uploaded to logsUri when it ends). */
  logPath(attemptId: string): string {
    return join(this.dir, `${attemptId}.log`);
  }

  /** Where the uploader keeps the multipart state of one output. */
  uploadStatePath(attemptId: string, outputId: string): string {
    return join(this.dir, `${attemptId}.${outputId}.upload.json`);
  }

  save(record: AttemptRecord): Promise<void> {
    return this.writes.run(record.lease.attemptId, async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await writeFileAtomic(this.path(record.lease.attemptId), JSON.stringify(record), { mode: 0o600 });
    });
  }

  /** Forgets the attempt: its record and every upload state next to it. */
  remove(lease: Pick<LeaseCommand, "attemptId">): Promise<void> {
    return this.writes.run(lease.attemptId, async () => {
      const names = await readdir(this.dir).catch(() => [] as string[]);
      await Promise.all(
        names
          .filter((name) => name.startsWith(`${lease.attemptId}.`))
          .map((name) => rm(join(this.dir, name), { force: true })),
      );
    });
  }

  /** Every readable record; unreadable ones are returned as names so the caller can log and remove them. */
  async list(): Promise<{ records: AttemptRecord[]; unreadable: string[] }> {
    const names = (await readdir(this.dir).catch(() => [] as string[])).filter(
      (name) => name.endsWith(".json") && !name.endsWith(".upload.json"),
    );
    const records: AttemptRecord[] = [];
    const unreadable: string[] = [];
    for (const name of names) {
      try {
        records.push(RecordSchema.parse(JSON.parse(await readFile(join(this.dir, name), "utf8"))));
      } catch {
        unreadable.push(join(this.dir, name));
      }
    }
    return { records, unreadable };
  }
}
