/**
 * The attempt streams its input through the agent's loopback relay instead of downloading it
 * first: ffmpeg's command line names only the relay (no store, no signature), the relay
 * refuses another user's connections, a store that stops answering for several retry budgets
 * holds ffmpeg's read and the same ffmpeg run goes on (an answer cut mid-body goes on from the
 * byte where it stopped, pinned to the object's version), reads beyond the object's size give
 * up the stream, and an output asking for audio the input lacks fails INPUT_INCOMPATIBLE,
 * ffmpeg having started before any ffprobe answered. Real s3rver (behind the request log,
 * which can cut requests and go down), real ffmpeg, the Attempt class with reports collected
 * in memory.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { createLogger } from "@tjm/platform";
import { examples, type LeaseCommand } from "@tjm/protocol";
import { createS3Client } from "@tjm/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attempt } from "../../worker-agent/src/attempts/attempt.ts";
import { AttemptRecords } from "../../worker-agent/src/attempts/records.ts";
import { InputRelay } from "../../worker-agent/src/storage/input-relay.ts";
import { InputWait } from "../../worker-agent/src/storage/input-wait.ts";
import { putClip } from "../harness/media-jobs.ts";
import { type S3RequestLog, startS3RequestLog } from "../harness/s3-request-log.ts";

const run = promisify(execFile);

let s3: S3Server;
let store: S3RequestLog;
let workDir: string;

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  store = await startS3RequestLog(s3.port);
  workDir = await mkdtemp(join(tmpdir(), "tjm-streamed-"));
  // ffmpeg writes the moov atom at the end unless told otherwise: reading it means seeking.
  await putClip(s3, { bucket: "media-in", key: "moov-at-end.mp4" }, 2, "320x240");
  const silent = join(workDir, "silent.mp4");
  await run("ffmpeg", [
    ...[
      "-hide_banner",
      "-loglevel",
      "error",
      "-y",
      "-f",
      "lavfi",
      "-i",
      "testsrc2=size=320x240:rate=25:duration=1",
    ],
    ...["-c:v", "libx264", "-preset", "ultrafast", silent],
  ]);
  await s3
    .client()
    .send(new PutObjectCommand({ Bucket: "media-in", Key: "silent.mp4", Body: readFileSync(silent) }));
});

afterAll(async () => {
  await store?.close();
  await s3?.stop();
  await rm(workDir, { recursive: true, force: true });
});

interface Outcome {
  reports: { type: string; body: Record<string, unknown> }[];
  logs: Record<string, unknown>[];
  /** ffmpeg's command line, read from /proc while it ran. */
  cmdlines: string[];
}

/**
 * Runs one attempt of a 240p h264/aac mp4 from `inputKey` to its end; `onEncoding` as each
 * ffmpeg starts; `ffprobePath` instead of the one on PATH; `beforeStored` as each report is
 * sent, before it counts as stored.
 */
async function runAttempt(
  inputKey: string,
  onEncoding?: () => void,
  ffprobePath?: string,
  beforeStored?: (type: string, attempt: Attempt) => void,
): Promise<Outcome> {
  const jobId = randomUUID();
  const attemptId = randomUUID();
  const lease: LeaseCommand = {
    ...examples.commands.lease,
    jobId,
    attemptId,
    plan: {
      input: { uri: `s3://media-in/${inputKey}` },
      outputs: [
        {
          id: "small",
          kind: "FILE",
          container: "mp4",
          destinationUri: `s3://media-out/streamed/${jobId}.mp4`,
          video: { codec: "h264", height: 240, preset: "fastest" },
          audio: { codec: "aac", bitrateKbps: 64 },
        },
      ],
      transforms: { removedSegments: [], subtitles: [], audioTracks: [] },
    },
    storage: { ...s3.settings, endpoint: store.endpoint },
    workDirectory: null,
    commit: "copy",
    uploads: [{ outputId: "small", uri: `s3://media-out/.tjm-staging/${jobId}/${attemptId}/small` }],
    logsUri: `s3://media-out/.tjm-logs/${jobId}/attempt-1.log`,
    dispatchDeadline: new Date(Date.now() + 60_000).toISOString(),
  };
  const outcome: Outcome = { reports: [], logs: [], cmdlines: [] };
  const records = new AttemptRecords(workDir);
  const logger = createLogger("info", (line) => {
    const entry = JSON.parse(line) as Record<string, unknown>;
    outcome.logs.push(entry);
    if (entry.msg === "encoding" && typeof entry.pid === "number") {
      onEncoding?.();
      outcome.cmdlines.push(readFileSync(`/proc/${entry.pid}/cmdline`, "utf8").replaceAll("\0", " "));
    }
  });
  const record = {
    lease,
    directory: workDir,
    phase: "encoding" as const,
    outputs: [],
    logPath: records.logPath(attemptId),
  };
  await records.save(record);
  const attempt = new Attempt(
    {
      pool: "cpu",
      ffmpegPath: undefined,
      ffprobePath,
      records,
      logger,
      report: async (_lease, type, body) => {
        outcome.reports.push({ type, body: body as Record<string, unknown> });
        beforeStored?.(type, attempt);
      },
      progress: () => {},
      storageRetry: { maxAttempts: 2, budgetMs: 300 },
    },
    record,
  );
  await attempt.done;
  return outcome;
}

const inputReads = (key: string) =>
  store.requests.filter((request) => request.method === "GET" && request.path === `/media-in/${key}`);

describe("a streamed input", () => {
  it("is read through the relay with ranges, never downloaded, and ffmpeg's command line names no store or signature", async () => {
    const before = inputReads("moov-at-end.mp4").length;
    const outcome = await runAttempt("moov-at-end.mp4");

    expect(outcome.reports.map((report) => report.type)).toEqual(["started", "encoded", "completed"]);
    const reads = inputReads("moov-at-end.mp4").slice(before);
    expect(reads.length).toBeGreaterThan(1);
    expect(reads.every((request) => request.range !== undefined)).toBe(true);
    expect(outcome.logs.find((line) => line.msg === "input streamed")).toMatchObject({
      objectBytes: expect.any(Number),
      bytesServed: expect.any(Number),
    });

    expect(outcome.cmdlines).toHaveLength(1);
    const cmdline = outcome.cmdlines[0] as string;
    expect(cmdline).toMatch(/-reconnect 1 .* -i http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32} /);
    expect(cmdline).not.toMatch(/X-Amz|Signature|media-in|S3RVER/);

    const completed = outcome.reports.find((report) => report.type === "completed")?.body as {
      outputs: { durationMs: number; codecs: string[]; heightPx: number }[];
    };
    expect(completed.outputs[0]).toMatchObject({ codecs: ["h264", "aac"], heightPx: 240 });
    expect(completed.outputs[0]?.durationMs).toBeGreaterThan(1900);
  });

  it("waits out a store that cuts its reads for several retry budgets mid-encode, and the same ffmpeg run completes", async () => {
    // From ffmpeg's start, every read of the input is cut for OUTAGE_MS: about five budgets.
    const OUTAGE_MS = 1_500;
    let outageEndsAt: number | undefined;
    store.intercept((request) => {
      if (request.path !== "/media-in/moov-at-end.mp4" || outageEndsAt === undefined) return;
      if (Date.now() < outageEndsAt) throw new Error("the store cut the read");
    });
    try {
      const before = inputReads("moov-at-end.mp4").length;
      const outcome = await runAttempt("moov-at-end.mp4", () => {
        outageEndsAt = Date.now() + OUTAGE_MS;
      });
      expect(outcome.reports.map((report) => report.type)).toEqual([
        "started",
        "input-waiting",
        "input-resumed",
        "encoded",
        "completed",
      ]);
      expect(outcome.reports[1]?.body).toMatchObject({
        since: expect.any(String),
        lastError: expect.stringMatching(
          /^stream s3:\/\/media-in\/moov-at-end\.mp4: storage unavailable after [12] attempt\(s\): .*(ECONNRESET|socket hang up)/,
        ),
      });
      // One ffmpeg, fed by ranged reads only: nothing was downloaded, nothing encoded twice.
      expect(outcome.cmdlines).toHaveLength(1);
      const reads = inputReads("moov-at-end.mp4").slice(before);
      expect(reads.every((request) => request.range !== undefined)).toBe(true);
      expect(reads.filter((request) => request.status === 0).length).toBeGreaterThan(2);
      const completed = outcome.reports.at(-1)?.body as { outputs: { durationMs: number }[] };
      expect(completed.outputs[0]?.durationMs).toBeGreaterThan(1900);
    } finally {
      store.intercept(undefined);
    }
  });

  it("does not lose a resume-uploads that comes before its upload-paused report counts as stored", async () => {
    let storeDown = true;
    store.intercept((request) => {
      if (storeDown && request.method !== "GET" && request.path.startsWith("/media-out/")) {
        throw new Error("the store is down");
      }
    });
    try {
      // The Manager applied the pause and an operator resumed before NATS acknowledged the report.
      const outcome = await runAttempt("moov-at-end.mp4", undefined, undefined, (type, attempt) => {
        if (type !== "upload-paused") return;
        storeDown = false;
        attempt.resume();
      });
      expect(outcome.reports.map((report) => report.type)).toEqual([
        "started",
        "encoded",
        "upload-paused",
        "upload-resumed",
        "completed",
      ]);
    } finally {
      store.intercept(undefined);
    }
  });

  it("fails INPUT_INCOMPATIBLE when an output asks for audio the input lacks, ffmpeg started before ffprobe answered", async () => {
    // An ffprobe that answers only once ffmpeg has started: an attempt that waited for the
    // probe before spawning ffmpeg would never get there.
    const gate = join(workDir, `ffmpeg-started-${randomUUID()}`);
    const gatedProbe = join(workDir, "gated-ffprobe.sh");
    await writeFile(
      gatedProbe,
      `#!/bin/sh\nwhile [ ! -e '${gate}' ]; do sleep 0.02; done\nexec ffprobe "$@"\n`,
    );
    await chmod(gatedProbe, 0o755);
    const outcome = await runAttempt("silent.mp4", () => writeFileSync(gate, ""), gatedProbe);
    expect(outcome.reports.map((report) => report.type)).toEqual(["started", "failed"]);
    expect(outcome.reports[1]?.body).toMatchObject({
      failureCode: "INPUT_INCOMPATIBLE",
      failureMessage: "an output asks for audio but the input has none",
    });
    expect(outcome.cmdlines).toHaveLength(1);
  });
});

describe("the input relay", () => {
  it("goes on from the byte where the store's answer broke off, pinned to the object's version, once the store is back", async () => {
    const body = randomBytes(24 * 1024 * 1024);
    await s3.client().send(new PutObjectCommand({ Bucket: "media-in", Key: "big.bin", Body: body }));
    const waits: string[] = [];
    const controller = new AbortController();
    const wait = new InputWait({
      limitMs: 60_000,
      pauseMs: 200,
      signal: controller.signal,
      onChange: (state, ended) => waits.push(state ? "waiting" : `ended ${ended}`),
    });
    const client = createS3Client(
      { ...s3.settings, endpoint: store.endpoint },
      { connectionTimeoutMs: 1_000, socketTimeoutMs: 5_000 },
    );
    const relay = await InputRelay.open(client, "s3://media-in/big.bin", {
      retry: { retry: { maxAttempts: 2, budgetMs: 200 } },
      signal: controller.signal,
      wait,
    });
    try {
      const before = store.requests.length;
      const answer = await fetch(relay.url, { headers: { Range: "bytes=1000-" } });
      expect(answer.status).toBe(206);
      const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
      // The reader takes one chunk and stops: the relay's read of the store stays mid-body.
      const chunks: Uint8Array[] = [(await reader.read()).value as Uint8Array];
      await store.down();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await store.up();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
      const received = Buffer.concat(chunks);
      expect(received.length).toBe(body.length - 1000);
      const digest = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
      expect(digest(received)).toBe(digest(body.subarray(1000)));
      expect(waits).toEqual(["waiting", "ended answered"]);
      const reads = store.requests.slice(before).filter((request) => request.path === "/media-in/big.bin");
      const [first, ...resumed] = reads;
      expect(first?.ifMatch).toBeUndefined();
      expect(resumed.length).toBeGreaterThan(0);
      const etag = resumed[0]?.ifMatch;
      expect(etag).toMatch(/^"[0-9a-f]+"$/);
      expect(resumed.every((request) => request.ifMatch === etag)).toBe(true);
      expect(resumed.at(-1)?.range).toMatch(/^bytes=\d+-25165823$/);
      expect(relay.problem).toBeUndefined();
    } finally {
      controller.abort();
      await relay.close();
      client.destroy();
    }
  });

  it("answers this user's ranged reads and refuses another user's connection", async () => {
    const relay = await InputRelay.open(s3.client(), "s3://media-in/moov-at-end.mp4");
    try {
      const answer = await fetch(relay.url, { headers: { Range: "bytes=0-9" } });
      expect(answer.status).toBe(206);
      expect((await answer.arrayBuffer()).byteLength).toBe(10);
      expect(answer.headers.get("content-range")).toMatch(/^bytes 0-9\/\d+$/);
      // uid 65534 (nobody): the relay checks the connection's owner in /proc/net/tcp.
      const other = await run("setpriv", [
        ...["--reuid=65534", "--regid=65534", "--clear-groups", "curl", "-s", "-o", "/dev/null"],
        ...["-w", "%{http_code}", relay.url],
      ]);
      expect(other.stdout).toBe("403");
    } finally {
      await relay.close();
    }
  });

  it("gives up the stream once its readers pull more than the object's size allows (a seek-heavy input)", async () => {
    const relay = await InputRelay.open(s3.client(), "s3://media-in/moov-at-end.mp4", {
      maxReadFactor: 1.5,
      readAheadBytes: 0,
    });
    try {
      for (let read = 0; read < 2; read++)
        await (await fetch(relay.url)).arrayBuffer().catch(() => undefined);
      expect(relay.problem).toMatchObject({ kind: "excess-reads" });
      expect((await fetch(relay.url)).status).toBe(503);
    } finally {
      await relay.close();
    }
  });
});
