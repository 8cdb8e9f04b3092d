import type { Stats } from "node:fs";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  readUploadState,
  removeUploadState,
  stateMismatch,
  type UploadState,
  writeUploadState,
} from "./upload-state.ts";

const state: UploadState = {
  version: 1,
  uploadId: "abc",
  bucket: "media-out",
  key: "jobs/1/out.mp4",
  fileSize: 21 * 1024 * 1024,
  fileMtimeMs: 1_700_000_000_123.456,
  partSize: 5 * 1024 * 1024,
  parts: [{ PartNumber: 1, ETag: '"d41d8cd98f00b204e9800998ecf8427e"' }],
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "tjm-upload-state-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("upload state file", () => {
  it("round-trips, with mode 0600, creating its directory and leaving no temp file", async () => {
    const path = join(dir, "nested", "out.upload.json");
    await writeUploadState(path, state);
    expect(await readUploadState(path)).toEqual({ status: "ok", state });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(dir, "nested"))).toEqual(["out.upload.json"]);
  });

  it("replaces the previous state as a whole", async () => {
    const path = join(dir, "s.json");
    await writeUploadState(path, state);
    const next = { ...state, parts: [...state.parts, { PartNumber: 2, ETag: '"e"' }] };
    await writeUploadState(path, next);
    expect(await readUploadState(path)).toEqual({ status: "ok", state: next });
  });

  it("reports a missing file as absent, and half-written or foreign JSON as corrupt", async () => {
    const path = join(dir, "s.json");
    expect(await readUploadState(path)).toEqual({ status: "absent" });
    await writeFile(path, '{"version":1,"uploadId":"a');
    expect((await readUploadState(path)).status).toBe("corrupt");
    await writeFile(path, JSON.stringify({ ...state, parts: [{ PartNumber: 0, ETag: "x" }] }));
    expect((await readUploadState(path)).status).toBe("corrupt");
  });

  it("removes the file, and removing an absent one is fine", async () => {
    const path = join(dir, "s.json");
    await writeUploadState(path, state);
    await removeUploadState(path);
    await removeUploadState(path);
    expect(await readUploadState(path)).toEqual({ status: "absent" });
  });
});

const MIB = 1024 * 1024;
const resumable: UploadState = {
  ...state,
  key: "out.mp4",
  fileSize: 21 * MIB,
  fileMtimeMs: 1000.5,
  parts: [],
};
const file = (size: number, mtimeMs: number) => ({ size, mtimeMs }) as Stats;

describe("stateMismatch", () => {
  it("resumes the same key and the same file version", () => {
    expect(
      stateMismatch(resumable, { bucket: "media-out", key: "out.mp4" }, file(21 * MIB, 1000.5)),
    ).toBeUndefined();
  });

  it("starts over for another key, or a file rewritten since", () => {
    expect(stateMismatch(resumable, { bucket: "media-out", key: "other.mp4" }, file(21 * MIB, 1000.5))).toBe(
      "the state is for s3://media-out/out.mp4, not s3://media-out/other.mp4",
    );
    expect(stateMismatch(resumable, { bucket: "media-out", key: "out.mp4" }, file(21 * MIB, 2000))).toBe(
      "the file changed since the upload began",
    );
    expect(stateMismatch(resumable, { bucket: "media-out", key: "out.mp4" }, file(22 * MIB, 1000.5))).toBe(
      "the file changed since the upload began",
    );
  });

  it("starts over when the saved part size is below S3's minimum", () => {
    expect(
      stateMismatch(
        { ...resumable, partSize: MIB },
        { bucket: "media-out", key: "out.mp4" },
        file(21 * MIB, 1000.5),
      ),
    ).toMatch(/part size/);
  });
});

describe("stateMismatch with uploads begun while the file was written", () => {
  it("never resumes a growing state, whatever its size says", () => {
    expect(
      stateMismatch(
        { ...resumable, growing: true },
        { bucket: "media-out", key: "out.mp4" },
        file(21 * MIB, 1000.5),
      ),
    ).toBe("the upload began while the file was still being written");
  });

  it("starts over when the file needs more parts than the store's limit at the saved part size", () => {
    const target = { bucket: "media-out", key: "out.mp4" };
    expect(stateMismatch(resumable, target, file(21 * MIB, 1000.5), 5)).toBeUndefined();
    expect(stateMismatch(resumable, target, file(21 * MIB, 1000.5), 4)).toMatch(/part size/);
  });

  it("reads a state file written before the growing flag existed, and one with it", async () => {
    const path = join(dir, "g.json");
    await writeUploadState(path, { ...state, growing: true });
    expect(await readUploadState(path)).toEqual({ status: "ok", state: { ...state, growing: true } });
    await writeFile(path, JSON.stringify(state));
    expect(await readUploadState(path)).toEqual({ status: "ok", state });
  });
});
