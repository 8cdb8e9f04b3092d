/**
 * GrowingFileUpload against a scripted store: a file grown by hand, byte by byte as a muxer
 * would, so which part goes up when is exact. The real thing (ffmpeg, s3rver, Swift) is in
 * tests/storage/growing-upload.test.ts and tests/storage-swift/jobs-interrupted.test.ts.
 */
import { createHash, randomBytes } from "node:crypto";
import { appendFile, mkdtemp, open, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { S3Client } from "@aws-sdk/client-s3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GrowingFileUpload } from "./growing-upload.ts";
import { readUploadState } from "./upload-state.ts";

const PART = 8;

interface StoreScript {
  refuseCreate?: boolean;
  refusePart?: (partNumber: number) => boolean;
}

/** A store that answers CreateMultipartUpload and UploadPart, and records every part it took. */
function scriptedStore(script: StoreScript = {}) {
  const stored: number[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const name = command.constructor.name;
      if (name === "CreateMultipartUploadCommand") {
        if (script.refuseCreate) throw Object.assign(new Error("denied"), { name: "AccessDenied" });
        return { UploadId: "upload-1" };
      }
      if (name === "UploadPartCommand") {
        const partNumber = command.input.PartNumber as number;
        if (script.refusePart?.(partNumber))
          throw Object.assign(new Error("denied"), { name: "AccessDenied" });
        stored.push(partNumber);
        const md5 = createHash("md5")
          .update(command.input.Body as Buffer)
          .digest("hex");
        return { ETag: `"${md5}"` };
      }
      throw new Error(`unexpected ${name}`);
    },
  } as unknown as S3Client;
  return { client, stored };
}

let dir: string;
let file: string;
let statePath: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "tjm-growing-"));
  file = join(dir, "output.ts");
  statePath = join(dir, "state.json");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function follow(client: S3Client, stored: (partNumber: number) => void = () => {}) {
  return new GrowingFileUpload({
    client,
    file,
    uri: "s3://media-out/out.ts",
    statePath,
    partSize: PART,
    concurrency: 2,
    pollMs: 5,
    retry: { maxAttempts: 1 },
    onPartStored: stored,
  });
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let waited = 0; !(await check()); waited += 5) {
    if (waited > 5_000) throw new Error("timed out");
    await delay(5);
  }
}

async function overwrite(offset: number, bytes: Buffer): Promise<void> {
  const handle = await open(file, "r+");
  await handle.write(bytes, 0, bytes.length, offset);
  await handle.close();
}

describe("GrowingFileUpload", () => {
  it("sends parts 2… once the file grows past their end, never part 1, and leaves a state to resume", async () => {
    const { client, stored } = scriptedStore();
    const upload = follow(client);
    await delay(20);
    await writeFile(file, randomBytes(PART + 3));
    await delay(30);
    expect(stored).toEqual([]);
    await appendFile(file, randomBytes(2 * PART));
    await until(() => stored.length === 2);
    // One byte short of completing part 4, which the follower would otherwise send before finish().
    await appendFile(file, randomBytes(PART - 4));
    expect(await upload.finish()).toEqual({ partsKept: 2, partsChanged: 0 });
    expect([...stored].sort()).toEqual([2, 3]);

    const info = await stat(file);
    const saved = await readUploadState(statePath);
    expect(saved).toMatchObject({
      status: "ok",
      state: { uploadId: "upload-1", fileSize: 4 * PART - 1, fileMtimeMs: info.mtimeMs, partSize: PART },
    });
    if (saved.status !== "ok") throw new Error("no state");
    expect(saved.state.growing).toBeUndefined();
    expect(saved.state.parts.map((part) => part.PartNumber)).toEqual([2, 3]);
  });

  it("drops at the finish every part whose bytes the writer changed after it went up", async () => {
    const { client, stored } = scriptedStore();
    const upload = follow(client);
    await writeFile(file, randomBytes(4 * PART));
    await until(() => stored.length === 3);
    // A header rewrite, and a byte of part 3 patched.
    await overwrite(0, randomBytes(4));
    await overwrite(2 * PART + 1, Buffer.from([0xff ^ (await readByte(2 * PART + 1))]));
    expect(await upload.finish()).toEqual({ partsKept: 2, partsChanged: 1 });
    const saved = await readUploadState(statePath);
    expect(saved.status === "ok" && saved.state.parts.map((part) => part.PartNumber)).toEqual([2, 4]);
  });

  it("drops a part the file no longer covers at the finish", async () => {
    const { client, stored } = scriptedStore();
    const upload = follow(client);
    await writeFile(file, randomBytes(3 * PART));
    await until(() => stored.length === 2);
    const handle = await open(file, "r+");
    await handle.truncate(3 * PART - 1);
    await handle.close();
    expect(await upload.finish()).toEqual({ partsKept: 1, partsChanged: 1 });
  });

  it("leaves a part the store refused to the upload after the exit, and starts no further part", async () => {
    const { client, stored } = scriptedStore({ refusePart: (partNumber) => partNumber === 2 });
    const upload = follow(client);
    await writeFile(file, randomBytes(2 * PART));
    await delay(50);
    await appendFile(file, randomBytes(3 * PART));
    await delay(50);
    expect(stored).toEqual([]);
    expect(await upload.finish()).toEqual({ partsKept: 0, partsChanged: 0 });
    const saved = await readUploadState(statePath);
    expect(saved).toMatchObject({ status: "ok", state: { uploadId: "upload-1", parts: [] } });
  });

  it("a store that cannot begin the upload leaves no state: the upload after the exit begins one", async () => {
    const { client } = scriptedStore({ refuseCreate: true });
    const upload = follow(client);
    await writeFile(file, randomBytes(3 * PART));
    await delay(30);
    expect(await upload.finish()).toEqual({ partsKept: 0, partsChanged: 0 });
    expect(await readUploadState(statePath)).toEqual({ status: "absent" });
  });

  it("stop() keeps the state marked growing, for an abort and never a resume", async () => {
    const { client, stored } = scriptedStore();
    const upload = follow(client);
    await writeFile(file, randomBytes(3 * PART));
    await until(() => stored.length === 2);
    await upload.stop();
    await appendFile(file, randomBytes(2 * PART));
    await delay(30);
    expect(stored).toHaveLength(2);
    expect(await readUploadState(statePath)).toMatchObject({
      status: "ok",
      state: { growing: true, uploadId: "upload-1", fileSize: 3 * PART },
    });
  });
});

async function readByte(offset: number): Promise<number> {
  const handle = await open(file, "r");
  const { buffer } = await handle.read(Buffer.alloc(1), 0, 1, offset);
  await handle.close();
  return buffer[0] as number;
}
