/**
 * Upload while encoding, with a real ffmpeg and a real S3 server (s3rver): parts of an output
 * go up while ffmpeg writes it, the rest after it exits, and the object is the file byte for
 * byte. ffmpeg reads its source in real time (-re), so the encode lasts as long as the clip
 * whatever the machine's speed, and "before ffmpeg exits" is seconds wide.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { createS3Client } from "@tjm/storage";
import { afterAll, beforeAll, describe, it } from "vitest";
import { GrowingFileUpload } from "../../worker-agent/src/storage/growing-upload.ts";
import { MultipartUploader } from "../../worker-agent/src/storage/upload.ts";
import { FAST_RETRY, MIB, partsSent, readObject, recordRequests, sha256 } from "./fixtures.ts";

const BUCKET = "media-out";
const PART = 5 * MIB;
let s3: S3Server;
let dir: string;

beforeAll(async () => {
  s3 = await startS3();
  await s3.createBucket(BUCKET);
  dir = await mkdtemp(join(tmpdir(), "tjm-growing-"));
});

afterAll(async () => {
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** 4 s of noisy 360p MPEG-2 (cheap to encode) in real time: about 23 MiB, five parts. */
const SOURCE = [
  ...["-re", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-t", "4"],
  ...["-vf", "noise=alls=80:allf=t", "-c:v", "mpeg2video", "-q:v", "3"],
];

const MUXERS = {
  mpegts: ["-f", "mpegts"],
  // As the Worker writes a fragmented mp4 (worker-agent/src/run/args.ts).
  "fragmented mp4": [
    ...["-f", "mp4", "-movflags", "+frag_keyframe+empty_moov+default_base_moof"],
    ...["-min_frag_duration", "1000000"],
  ],
  // ffmpeg moves every byte at the end: what went up meanwhile is all sent again.
  "faststart mp4": ["-f", "mp4", "-movflags", "+faststart"],
} as const;

function encode(args: readonly string[], output: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ffmpeg = spawn("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", ...args, output], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    ffmpeg.on("error", reject);
    ffmpeg.on("exit", (code) =>
      code === 0 ? resolve(Date.now()) : reject(new Error(`ffmpeg exited ${code}`)),
    );
  });
}

describe("upload while ffmpeg writes", () => {
  // Concurrent: each encode takes its clip's length in real time, not CPU.
  it.concurrent.for(Object.keys(MUXERS) as (keyof typeof MUXERS)[])(
    "%s: parts go up before ffmpeg exits, the rest after, and the object equals the file",
    async (muxer, { expect }) => {
      const name = muxer.replaceAll(" ", "-");
      const file = join(dir, `${name}.out`);
      const statePath = join(dir, `${name}.upload.json`);
      const uri = `s3://${BUCKET}/growing/${name}`;
      const client = createS3Client(s3.settings);
      const sent = recordRequests(client);
      const storedAt: number[] = [];
      const growing = new GrowingFileUpload({
        client,
        file,
        uri,
        statePath,
        partSize: PART,
        concurrency: 4,
        retry: FAST_RETRY,
        onPartStored: () => storedAt.push(Date.now()),
      });
      const exitedAt = await encode([...SOURCE, ...MUXERS[muxer]], file);
      const streamed = await growing.finish();
      const bytes = await readFile(file);
      const partCount = Math.ceil(bytes.length / PART);
      expect(partCount).toBeGreaterThanOrEqual(4);

      // Parts 2… were sent while ffmpeg still ran (on a loaded machine their answers may come
      // after the exit); part 1 and the short last part were not.
      const sentBeforeExit = sent.filter(
        (request) => request.command === "UploadPartCommand" && request.at < exitedAt,
      ).length;
      expect(sentBeforeExit).toBeGreaterThanOrEqual(2);
      expect(partsSent(sent)).not.toContain(1);
      expect(partsSent(sent)).not.toContain(partCount);
      if (muxer === "faststart mp4") {
        // Parts sent before the rewrite changed; one the follower read after it (a loaded
        // machine) already holds the final bytes and is rightly kept.
        expect(streamed.partsChanged).toBeGreaterThanOrEqual(1);
        expect(streamed.partsKept + streamed.partsChanged).toBe(storedAt.length);
      } else {
        expect(streamed).toEqual({ partsKept: storedAt.length, partsChanged: 0 });
      }

      const result = await new MultipartUploader({
        client,
        file,
        uri,
        statePath,
        partSize: PART,
        concurrency: partCount,
        retry: FAST_RETRY,
      }).upload();
      expect(result).toMatchObject({
        bytes: bytes.length,
        partsResumed: streamed.partsKept,
        partsSent: partCount - streamed.partsKept,
      });
      expect(sha256(await readObject(client, BUCKET, `growing/${name}`))).toBe(sha256(bytes));
      client.destroy();
    },
  );
});
