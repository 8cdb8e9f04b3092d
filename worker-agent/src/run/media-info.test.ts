import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FfmpegUnavailableError } from "../probe/run-ffmpeg.ts";
import { InputUnreadableError, parseProbeJson, probeArgs, probeMedia, redactLocation } from "./media-info.ts";

/** Captured from Debian's ffprobe 5.1; fixtures/README.md says how each file was made. */
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");

describe("parseProbeJson", () => {
  it("an mkv with video, two audio streams and a subtitle", () => {
    expect(parseProbeJson(fixture("ffprobe-mkv-two-audio-subtitle.json"))).toEqual({
      formatName: "matroska,webm",
      durationMs: 2043,
      video: { codec: "h264", width: 320, height: 240 },
      audioStreams: [
        { codec: "aac", channels: 1, sampleRateHz: 48_000, language: "eng" },
        { codec: "aac", channels: 1, sampleRateHz: 44_100, language: "fra" },
      ],
      subtitleStreams: [{ codec: "subrip", language: "eng" }],
    });
  });

  it("an mp3's cover art is not its video", () => {
    expect(parseProbeJson(fixture("ffprobe-mp3-cover-art.json"))).toEqual({
      formatName: "mp3",
      durationMs: 2038,
      audioStreams: [{ codec: "mp3", bitRateBps: 64_000, channels: 1, sampleRateHz: 44_100 }],
      subtitleStreams: [],
    });
  });

  it("a quarter-turned video reports its displayed size, as ffmpeg autorotates it", () => {
    const info = parseProbeJson(fixture("ffprobe-mp4-rotated.json"));
    expect(info.video).toEqual({ codec: "h264", width: 240, height: 320 });
  });

  it("the first real picture is chosen when cover art comes first", () => {
    const json = JSON.stringify({
      format: { format_name: "mov,mp4,m4a,3gp,3g2,mj2", duration: "5.5" },
      streams: [
        {
          codec_type: "video",
          codec_name: "mjpeg",
          width: 600,
          height: 600,
          disposition: { attached_pic: 1 },
        },
        {
          codec_type: "video",
          codec_name: "hevc",
          width: 3840,
          height: 2160,
          disposition: { attached_pic: 0 },
        },
      ],
    });
    expect(parseProbeJson(json).video).toEqual({ codec: "hevc", width: 3840, height: 2160 });
  });

  it("without a container duration the longest stream's is used; 'und' is no language", () => {
    const json = JSON.stringify({
      format: { format_name: "mpegts" },
      streams: [
        { codec_type: "audio", codec_name: "aac", channels: 2, duration: "3.2", tags: { language: "und" } },
        { codec_type: "audio", codec_name: "mp2", channels: 2, duration: "3.25" },
      ],
    });
    expect(parseProbeJson(json)).toEqual({
      formatName: "mpegts",
      durationMs: 3250,
      audioStreams: [
        { codec: "aac", channels: 2 },
        { codec: "mp2", channels: 2 },
      ],
      subtitleStreams: [],
    });
  });

  it.each([
    ["not JSON", "<html>", /no JSON/],
    ["ffprobe's output for an unreadable file", "{\n\n}\n", /no media container/],
    [
      "only a subtitle stream",
      JSON.stringify({ format: { duration: "1" }, streams: [{ codec_type: "subtitle" }] }),
      /no video or audio/,
    ],
    [
      "only cover art",
      JSON.stringify({
        format: { duration: "1" },
        streams: [{ codec_type: "video", width: 1, height: 1, disposition: { attached_pic: 1 } }],
      }),
      /no video or audio/,
    ],
    [
      "no duration anywhere",
      JSON.stringify({ format: {}, streams: [{ codec_type: "audio", codec_name: "aac" }] }),
      /duration/,
    ],
  ])("%s -> InputUnreadableError", (_, json, message) => {
    expect(() => parseProbeJson(json)).toThrow(InputUnreadableError);
    expect(() => parseProbeJson(json)).toThrow(message);
  });
});

describe("probeArgs and redaction", () => {
  it("the location follows '--' so a name starting with '-' is not an option", () => {
    expect(probeArgs("-weird.mp4")).toEqual([
      ...["-v", "error", "-print_format", "json", "-show_format", "-show_streams", "--", "-weird.mp4"],
    ]);
  });

  it("a presigned URL's query is removed from error text", () => {
    const url = "https://s3.example/b/k.mp4?X-Amz-Signature=secret";
    expect(redactLocation(`${url}: Server returned 403 Forbidden`, url)).toBe(
      "https://s3.example/b/k.mp4?[redacted]: Server returned 403 Forbidden",
    );
    expect(redactLocation("/tmp/a.mp4: No such file", "/tmp/a.mp4")).toBe("/tmp/a.mp4: No such file");
  });
});

describe("probeMedia (real ffprobe)", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "tjm-media-info-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a text file is INPUT_UNREADABLE with ffprobe's reason", async () => {
    const path = join(dir, "notes.mp4");
    writeFileSync(path, "not a video\n");
    const error = await probeMedia(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputUnreadableError);
    expect(error).toMatchObject({ failureCode: "INPUT_UNREADABLE" });
    expect((error as Error).message).toMatch(/Invalid data found when processing input/);
  });

  it("a missing file is INPUT_UNREADABLE", async () => {
    await expect(probeMedia(join(dir, "missing.mp4"))).rejects.toThrow(/No such file or directory/);
  });

  it("a probe that hangs is killed at the timeout", async () => {
    const slow = join(dir, "slow-ffprobe");
    writeFileSync(slow, "#!/bin/sh\nexec sleep 30\n");
    chmodSync(slow, 0o755);
    const started = Date.now();
    await expect(probeMedia("/x.mp4", { ffprobePath: slow, timeoutMs: 200 })).rejects.toThrow(
      /did not finish reading the input within 200 ms/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("no ffprobe at the given path is the Worker's problem, not the input's", async () => {
    await expect(probeMedia("/x.mp4", { ffprobePath: join(dir, "nope") })).rejects.toBeInstanceOf(
      FfmpegUnavailableError,
    );
  });

  it("names ffprobe and FFPROBE_PATH, and quotes a path containing 'ffmpeg' unchanged", async () => {
    const ffprobePath = join(dir, "ffmpeg", "bin", "ffprobe");
    await expect(probeMedia("/x.mp4", { ffprobePath })).rejects.toThrow(
      `ffprobe not found at ${ffprobePath}: set FFPROBE_PATH`,
    );
  });
});
