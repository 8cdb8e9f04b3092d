/**
 * The in-process MP4/MOV reader against ffprobe on outputs the real ffmpeg wrote from the
 * Worker's own commands: every codec a plan can put in mp4 or mov, two audio tracks with a
 * soft subtitle and a cut, audio alone. Where the reader answers, its answer must be
 * ffprobe's; where it must not answer (fragmented MP4, other containers), ffprobe does.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionPlan, PlanOutput, PlanTransforms } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFfmpegCommand, probeFactsNeeded } from "./args.ts";
import { startFfmpeg } from "./ffmpeg-process.ts";
import { describeIsoMediaFile } from "./iso-media.ts";
import { probeMedia } from "./media-info.ts";
import { describeOutput, describeProbed } from "./output-description.ts";
import { output } from "./test-plans.ts";

let dir: string;
let input: string;
let subtitle: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tjm-output-description-"));
  input = join(dir, "input.mp4");
  execFileSync("ffmpeg", [
    ...["-hide_banner", "-v", "error", "-nostdin", "-y"],
    ...["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=2"],
    ...["-f", "lavfi", "-i", "sine=f=440:r=48000:d=2"],
    ...["-f", "lavfi", "-i", "sine=f=880:r=44100:d=2"],
    ...["-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"],
    input,
  ]);
  subtitle = join(dir, "en.srt");
  writeFileSync(subtitle, "1\n00:00:00,200 --> 00:00:01,400\nHello\n");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Encodes the plan as the Worker builds its command; returns each output's path. */
async function encode(outputs: PlanOutput[], transforms: Partial<PlanTransforms> = {}) {
  const plan: ExecutionPlan = {
    input: { uri: "s3://media-in/input.mp4" },
    outputs,
    transforms: { removedSegments: [], subtitles: [], audioTracks: [], ...transforms },
  };
  const info = probeFactsNeeded(plan) === undefined ? undefined : await probeMedia(input);
  const outputPaths = Object.fromEntries(outputs.map((o) => [o.id, join(dir, `${o.id}.${o.container}`)]));
  const command = buildFfmpegCommand({
    plan,
    pool: "cpu",
    input: { path: input, ...(info ? { info } : {}) },
    subtitlePaths: plan.transforms.subtitles.map(() => subtitle),
    outputPaths,
  });
  await startFfmpeg({
    args: command.args,
    expectedDurationMs: command.expectedDurationMs,
    logPath: join(dir, `${outputs[0]?.id}.log`),
    onProgress: () => undefined,
  }).done;
  return outputPaths as Record<string, string>;
}

const fastest = "fastest" as const;

describe("an MP4 or MOV output described without ffprobe", () => {
  it("gives ffprobe's duration, codecs and size for every codec mp4 and mov carry", async () => {
    const paths = await encode([
      output("h264-aac", "mp4", {
        video: { codec: "h264", preset: fastest },
        audio: { codec: "aac", bitrateKbps: 96 },
      }),
      output("hevc-opus", "mp4", {
        video: { codec: "hevc", preset: fastest },
        audio: { codec: "opus", bitrateKbps: 64 },
      }),
      output("vp9-mp3", "mp4", {
        video: { codec: "vp9", preset: fastest, height: 144 },
        audio: { codec: "mp3", bitrateKbps: 96 },
      }),
      output("av1", "mp4", { video: { codec: "av1", preset: fastest, height: 144 } }),
      output("mov-h264-aac", "mov", {
        video: { codec: "h264", preset: fastest, height: 180 },
        audio: { codec: "aac", bitrateKbps: 96 },
      }),
      output("mov-hevc-mp3", "mov", {
        video: { codec: "hevc", preset: fastest },
        audio: { codec: "mp3", bitrateKbps: 96 },
      }),
      output("aac", "mp4", { audio: { codec: "aac", bitrateKbps: 64 } }),
      output("mov-mp3", "mov", { audio: { codec: "mp3", bitrateKbps: 64 } }),
    ]);
    const expected: Record<string, string[]> = {
      "h264-aac": ["h264", "aac"],
      "hevc-opus": ["hevc", "opus"],
      "vp9-mp3": ["vp9", "mp3"],
      av1: ["av1"],
      "mov-h264-aac": ["h264", "aac"],
      "mov-hevc-mp3": ["hevc", "mp3"],
      aac: ["aac"],
      "mov-mp3": ["mp3"],
    };
    for (const [id, path] of Object.entries(paths)) {
      const read = await describeIsoMediaFile(path);
      expect(read, id).toEqual(describeProbed(await probeMedia(path)));
      expect(read?.codecs, id).toEqual(expected[id]);
    }
    expect(await describeIsoMediaFile(paths["mov-h264-aac"] as string)).toMatchObject({
      widthPx: 240,
      heightPx: 180,
    });
  });

  it("gives ffprobe's answer for two audio tracks, a soft subtitle and a cut", async () => {
    const paths = await encode(
      [
        output("mp4", "mp4", {
          video: { codec: "h264", preset: fastest },
          audio: { codec: "aac", bitrateKbps: 64 },
        }),
        output("mov", "mov", {
          video: { codec: "h264", preset: fastest },
          audio: { codec: "aac", bitrateKbps: 64 },
        }),
      ],
      {
        removedSegments: [{ startMs: 500, endMs: 900 }],
        audioTracks: [{ streamIndex: 1, language: "fr" }, { streamIndex: 0 }],
        subtitles: [{ uri: "s3://media-in/en.srt", language: "en", mode: "SOFT" }],
      },
    );
    for (const path of Object.values(paths)) {
      const read = await describeIsoMediaFile(path);
      expect(read).toEqual(describeProbed(await probeMedia(path)));
      expect(read?.codecs).toEqual(["h264", "aac", "aac", "mov_text"]);
    }
  });

  it("leaves a fragmented MP4 and other containers to ffprobe", async () => {
    const paths = await encode([
      output("fragmented", "mp4", {
        fragmented: true,
        video: { codec: "h264", preset: fastest },
        audio: { codec: "aac", bitrateKbps: 64 },
      }),
      output("mkv", "mkv", {
        video: { codec: "h264", preset: fastest },
        audio: { codec: "aac", bitrateKbps: 64 },
      }),
    ]);
    expect(await describeIsoMediaFile(paths.fragmented as string)).toBeUndefined();
    for (const [id, path] of Object.entries(paths)) {
      const container = id === "mkv" ? "mkv" : "mp4";
      expect(await describeOutput(path, container)).toEqual(describeProbed(await probeMedia(path)));
    }
  });

  it("gives up, for ffprobe to answer, on a sample entry it does not name, a rotation or a cut-off moov", async () => {
    const { plain } = await encode([output("plain", "mp4", { video: { codec: "h264", preset: fastest } })]);
    const bytes = readFileSync(plain as string);
    const variant = (name: string, change: (copy: Buffer) => Buffer) => {
      const path = join(dir, `${name}.mp4`);
      writeFileSync(path, change(Buffer.from(bytes)));
      return path;
    };
    const unnamed = variant("unnamed", (copy) => {
      // The sample entry's, not ftyp's compatible brand.
      copy.write("xvc1", copy.indexOf("avc1", copy.indexOf("stsd")), "latin1");
      return copy;
    });
    // tkhd's matrix as ffmpeg writes it for a quarter turn: (0, 1, 0; -1, 0, 0; 0, 0, 1).
    const rotated = variant("rotated", (copy) => {
      const matrix = copy.indexOf("tkhd") + 4 + 4 + 20 + 16;
      for (const [index, value] of [0, 0x0001_0000, 0, -0x0001_0000, 0].entries()) {
        copy.writeInt32BE(value, matrix + index * 4);
      }
      return copy;
    });
    const cutOff = variant("cut-off", (copy) => copy.subarray(0, copy.indexOf("moov") + 200));
    for (const path of [unnamed, rotated, cutOff])
      expect(await describeIsoMediaFile(path), path).toBeUndefined();
    expect(await describeOutput(rotated, "mp4")).toMatchObject({ widthPx: 240, heightPx: 320 });
  });
});
