/**
 * Plans encoded by the real ffmpeg on the cpu pool, each output checked with ffprobe. Inputs
 * are generated with lavfi in beforeAll: 4 s of testsrc2 at 320x240 with two sine tracks
 * (440 Hz "eng", 880 Hz "fra") so a test can tell which input track an output track came
 * from, and 3 s of black for burn-in and watermark checks (any bright pixel is ours).
 * Everything runs at the "fastest" preset and low resolution to stay quick on 2 cores.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionPlan, PlanOutput, PlanTransforms } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFfmpegCommand, probeFactsNeeded } from "./args.ts";
import { FfmpegFailedError, startFfmpeg } from "./ffmpeg-process.ts";
import { probeMedia } from "./media-info.ts";
import { missingStreamError } from "./plan-errors.ts";
import type { ProgressUpdate } from "./progress.ts";
import { retimeSubtitles } from "./subtitle-retime.ts";
import { output } from "./test-plans.ts";

const ENCODERS = execFileSync("ffmpeg", ["-hide_banner", "-encoders"], { encoding: "utf8" });
const hasEncoder = (name: string) => new RegExp(`^ \\S{6} ${name} `, "m").test(ENCODERS);
const MISSING = ["libx264", "libx265", "libsvtav1", "libvpx-vp9", "libopus", "libmp3lame"].filter(
  (e) => !hasEncoder(e),
);

/**
 * ±0.1 s on durations: a cut may shift a stream by up to one video frame (40 ms at 25 fps)
 * and AAC/Opus end on whole frames (21/20 ms), so 100 ms is two such steps of slack.
 */
const DURATION_TOLERANCE_S = 0.1;
/**
 * ±25 % on audio bitrates: over 2-4 s the encoders' rate control has barely settled, a pure
 * sine compresses far below the target (so both encoders pad or undershoot), and the encoder
 * delay and container framing weigh a few percent on so little data.
 */
const BITRATE_TOLERANCE = 0.25;

let dir: string;
let colourInput: string;
let blackInput: string;

function ffmpeg(args: string[]): Buffer {
  return execFileSync("ffmpeg", ["-hide_banner", "-v", "error", "-nostdin", "-y", ...args], {
    maxBuffer: 64 * 1024 * 1024,
  });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tjm-encode-real-"));
  colourInput = join(dir, "colour.mp4");
  ffmpeg([
    ...["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=4"],
    ...["-f", "lavfi", "-i", "sine=f=440:r=48000:d=4"],
    ...["-f", "lavfi", "-i", "sine=f=880:r=44100:d=4"],
    ...["-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25"],
    ...["-c:a", "aac", "-b:a", "96k", "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra"],
    colourInput,
  ]);
  blackInput = join(dir, "black.mp4");
  ffmpeg([
    ...[
      "-f",
      "lavfi",
      "-i",
      "color=c=black:s=320x240:r=25:d=3",
      "-f",
      "lavfi",
      "-i",
      "sine=f=440:r=48000:d=3",
    ],
    ...["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", blackInput],
  ]);
  ffmpeg(["-f", "lavfi", "-i", "color=c=white:s=40x20", "-frames:v", "1", join(dir, "logo.png")]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function plan(outputs: PlanOutput[], transforms: Partial<PlanTransforms> = {}): ExecutionPlan {
  return {
    input: { uri: "s3://media-in/input.mp4" },
    outputs,
    transforms: { removedSegments: [], subtitles: [], audioTracks: [], ...transforms },
  };
}

/**
 * Builds the command for `executionPlan` as the Worker does (probing the input only when the
 * plan needs it), runs it, returns each output's path and the progress seen.
 */
async function encode(
  executionPlan: ExecutionPlan,
  input: string,
  files: { subtitlePaths?: string[]; watermarkPath?: string } = {},
) {
  const info = probeFactsNeeded(executionPlan) === undefined ? undefined : await probeMedia(input);
  const outputPaths = Object.fromEntries(
    executionPlan.outputs.map((o) => [o.id, join(dir, `${o.id}.${o.container}`)]),
  );
  const command = buildFfmpegCommand({
    plan: executionPlan,
    pool: "cpu",
    input: { path: input, ...(info ? { info } : {}) },
    subtitlePaths: files.subtitlePaths ?? [],
    ...(files.watermarkPath ? { watermarkPath: files.watermarkPath } : {}),
    outputPaths,
  });
  const updates: ProgressUpdate[] = [];
  await startFfmpeg({
    args: command.args,
    expectedDurationMs: command.expectedDurationMs,
    logPath: join(dir, `${Object.keys(outputPaths).join("-")}.log`),
    onProgress: (update) => updates.push(update),
  }).done;
  return { paths: outputPaths, expectedDurationMs: command.expectedDurationMs, updates };
}

interface ProbedStream {
  codec_type: string;
  codec_name: string;
  width?: number;
  height?: number;
  channels?: number;
  duration?: string;
  tags?: Record<string, string>;
}

function probe(path: string): { streams: ProbedStream[]; durationS: number } {
  const json = JSON.parse(
    execFileSync("ffprobe", ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", path], {
      encoding: "utf8",
    }),
  ) as { streams: ProbedStream[]; format: { duration: string } };
  return { streams: json.streams, durationS: Number(json.format.duration) };
}

const ofType = (streams: ProbedStream[], type: string) => streams.filter((s) => s.codec_type === type);

/** A stream's duration: the stream field (MP4) or the DURATION tag Matroska writes. */
function streamDurationS(stream: ProbedStream): number {
  if (stream.duration !== undefined) return Number(stream.duration);
  const [h = 0, m = 0, s = 0] = (stream.tags?.DURATION ?? "").split(":").map(Number);
  return h * 3600 + m * 60 + s;
}

/** ffprobe's packets of one stream (JSON: the CSV writer mixes side data into the rows). */
function packets(path: string, stream: string): { size: string; pts_time: string; duration_time?: string }[] {
  const json = execFileSync(
    "ffprobe",
    [
      "-v",
      "error",
      "-select_streams",
      stream,
      "-show_entries",
      "packet=size,pts_time,duration_time",
      "-of",
      "json",
      path,
    ],
    { encoding: "utf8" },
  );
  return (JSON.parse(json) as { packets: { size: string; pts_time: string; duration_time?: string }[] })
    .packets;
}

/** From the packets themselves, so it works in containers that record no stream bitrate. */
function audioBitrateKbps(path: string, audioIndex: number): number {
  const bytes = packets(path, `a:${audioIndex}`).reduce((total, packet) => total + Number(packet.size), 0);
  return (bytes * 8) / probe(path).durationS / 1000;
}

/**
 * Subtitle cues as [start, end] ms against the video's first frame. Muxers shift every stream
 * alike to keep timestamps non-negative (Matroska by the audio encoder's delay), so cue times
 * are only meaningful relative to the picture. MP4 timed text fills the gaps between cues
 * with empty 2-byte samples, which are not cues.
 */
function cuesAgainstVideo(path: string): [number, number][] {
  const videoStart = Number(
    packets(path, "v:0").reduce((min, p) => Math.min(min, Number(p.pts_time)), Infinity),
  );
  return packets(path, "s:0")
    .filter((packet) => Number(packet.size) > 2)
    .map((packet) => {
      const start = Number(packet.pts_time) - videoStart;
      return [Math.round(start * 1000), Math.round((start + Number(packet.duration_time)) * 1000)];
    });
}

/** Dominant frequency of an audio stream over its first second, from zero crossings. */
function toneHz(path: string, audioIndex: number): number {
  const pcm = ffmpeg([
    "-i",
    path,
    "-map",
    `0:a:${audioIndex}`,
    "-t",
    "1",
    "-ac",
    "1",
    "-ar",
    "48000",
    "-f",
    "s16le",
    "-",
  ]);
  const samples = new Int16Array(pcm.buffer, pcm.byteOffset, Math.floor(pcm.byteLength / 2));
  let crossings = 0;
  for (let i = 1; i < samples.length; i++)
    if ((samples[i - 1] as number) < 0 !== (samples[i] as number) < 0) crossings++;
  return crossings / 2 / (samples.length / 48_000);
}

/** The luma plane of the frame shown at `atS`. */
function frame(path: string, atS: number, width: number, height: number) {
  const gray = ffmpeg([
    "-ss",
    String(atS),
    "-i",
    path,
    "-frames:v",
    "1",
    "-f",
    "rawvideo",
    "-pix_fmt",
    "gray",
    "-",
  ]);
  expect(gray.byteLength).toBe(width * height);
  const region = (x0: number, y0: number, x1: number, y1: number) => {
    let max = 0;
    let sum = 0;
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) {
        const value = gray[y * width + x] as number;
        max = Math.max(max, value);
        sum += value;
      }
    }
    return { max, mean: sum / ((x1 - x0) * (y1 - y0)) };
  };
  return { region };
}

function expectDuration(actualS: number, expectedMs: number) {
  expect(Math.abs(actualS - expectedMs / 1000)).toBeLessThanOrEqual(DURATION_TOLERANCE_S);
}

function expectBitrate(actualKbps: number, targetKbps: number) {
  expect(Math.abs(actualKbps - targetKbps) / targetKbps).toBeLessThanOrEqual(BITRATE_TOLERANCE);
}

describe.skipIf(MISSING.length > 0)(
  `real encodes (cpu pool)${MISSING.length ? `: ffmpeg lacks ${MISSING.join(", ")}` : ""}`,
  () => {
    it("two outputs from one decode: H.264/AAC mp4 at 180p and VP9/Opus webm at the input size", async () => {
      const result = await encode(
        plan([
          output("small", "mp4", {
            video: { codec: "h264", height: 180, preset: "fastest" },
            audio: { codec: "aac", bitrateKbps: 96 },
          }),
          output("web", "webm", {
            video: { codec: "vp9", preset: "fastest" },
            audio: { codec: "opus", bitrateKbps: 64 },
          }),
        ]),
        colourInput,
      );
      // Unprobed: the percent comes from the duration ffmpeg prints for its input.
      expect(result.expectedDurationMs).toBeUndefined();
      expect(result.updates.at(-1)).toMatchObject({ final: true });
      expect(result.updates.at(-1)?.percent).toBeGreaterThanOrEqual(99);

      const small = probe(result.paths.small as string);
      expect(small.streams.map((s) => [s.codec_type, s.codec_name])).toEqual([
        ["video", "h264"],
        ["audio", "aac"],
      ]);
      expect(ofType(small.streams, "video")[0]).toMatchObject({ width: 240, height: 180 });
      expectDuration(small.durationS, 4_000);
      expectBitrate(audioBitrateKbps(result.paths.small as string, 0), 96);
      expect(ofType(small.streams, "audio")[0]?.tags?.language).toBe("eng");

      const web = probe(result.paths.web as string);
      expect(web.streams.map((s) => [s.codec_type, s.codec_name])).toEqual([
        ["video", "vp9"],
        ["audio", "opus"],
      ]);
      expect(ofType(web.streams, "video")[0]).toMatchObject({ width: 320, height: 240 });
      expectDuration(web.durationS, 4_000);
      expectBitrate(audioBitrateKbps(result.paths.web as string, 0), 64);
    });

    it("audio asked of a video-only input, with no probe before ffmpeg: ffmpeg refuses, INPUT_INCOMPATIBLE, no silent output", async () => {
      const videoOnly = join(dir, "video-only.mp4");
      ffmpeg(["-i", blackInput, "-map", "0:v", "-c", "copy", videoOnly]);
      const executionPlan = plan([
        output("sound", "mp4", {
          video: { codec: "h264", height: 120, preset: "fastest" },
          audio: { codec: "aac", bitrateKbps: 64 },
        }),
      ]);
      expect(probeFactsNeeded(executionPlan)).toBeUndefined();
      const failure = await encode(executionPlan, videoOnly).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(FfmpegFailedError);
      const incompatible = missingStreamError((failure as FfmpegFailedError).stderrTail);
      expect(incompatible?.failureCode).toBe("INPUT_INCOMPATIBLE");
      expect(incompatible?.message).toContain("audio stream 0");
      expect(() => probe(join(dir, "sound.mp4"))).toThrow();
    });

    it("removed segments, two selected audio tracks, soft subtitles and an audio-only output in one run", async () => {
      const removedSegments = [
        { startMs: 1_000, endMs: 1_500 },
        { startMs: 2_500, endMs: 3_000 },
      ];
      const srt =
        "1\n00:00:00,200 --> 00:00:00,800\nfirst\n\n2\n00:00:01,200 --> 00:00:02,000\nacross the cut\n\n3\n00:00:03,200 --> 00:00:03,900\nlast\n";
      const subtitlePath = join(dir, "retimed.srt");
      writeFileSync(subtitlePath, retimeSubtitles(srt, removedSegments, 4_000));
      const result = await encode(
        plan(
          [
            output("hevc", "mkv", {
              video: { codec: "hevc", height: 144, preset: "fastest" },
              audio: { codec: "aac", bitrateKbps: 128 },
            }),
            output("h264", "mp4", {
              video: { codec: "h264", preset: "fastest" },
              audio: { codec: "aac", bitrateKbps: 96 },
            }),
            output("audio", "mp4", { audio: { codec: "aac", bitrateKbps: 64 } }),
          ],
          {
            removedSegments,
            audioTracks: [
              { streamIndex: 1, language: "fr" },
              { streamIndex: 0, language: "en" },
            ],
            subtitles: [{ uri: "s3://media-in/en.srt", language: "en", mode: "SOFT" }],
          },
        ),
        colourInput,
        { subtitlePaths: [subtitlePath] },
      );
      expect(result.expectedDurationMs).toBe(3_000);

      for (const [id, subtitleCodec] of [
        ["hevc", "subrip"],
        ["h264", "mov_text"],
      ] as const) {
        const probed = probe(result.paths[id] as string);
        expect(probed.streams.map((s) => s.codec_type)).toEqual(["video", "audio", "audio", "subtitle"]);
        expectDuration(probed.durationS, 3_000);
        // Audio and video in sync: every stream ends where the cut timeline ends.
        for (const stream of probed.streams.filter((s) => s.codec_type !== "subtitle")) {
          expectDuration(streamDurationS(stream), 3_000);
        }
        expect(ofType(probed.streams, "audio").map((s) => s.tags?.language)).toEqual(["fra", "eng"]);
        expect(ofType(probed.streams, "subtitle")[0]).toMatchObject({
          codec_name: subtitleCodec,
          tags: { language: "eng" },
        });
      }
      const hevc = probe(result.paths.hevc as string);
      expect(ofType(hevc.streams, "video")[0]).toMatchObject({ codec_name: "hevc", width: 192, height: 144 });

      // The first output track is the 880 Hz input track 1, the second the 440 Hz track 0.
      expect(toneHz(result.paths.h264 as string, 0)).toBeCloseTo(880, -1);
      expect(toneHz(result.paths.h264 as string, 1)).toBeCloseTo(440, -1);

      const expectedCues = [
        [200, 800],
        [1_000, 1_500],
        [2_200, 2_900],
      ];
      expect(cuesAgainstVideo(result.paths.hevc as string)).toEqual(expectedCues);
      expect(cuesAgainstVideo(result.paths.h264 as string)).toEqual(expectedCues);

      const audio = probe(result.paths.audio as string);
      expect(audio.streams.map((s) => [s.codec_type, s.codec_name])).toEqual([
        ["audio", "aac"],
        ["audio", "aac"],
      ]);
      expectDuration(audio.durationS, 3_000);
      expectBitrate(audioBitrateKbps(result.paths.audio as string, 0), 64);
      expectBitrate(audioBitrateKbps(result.paths.audio as string, 1), 64);
    });

    it("opus from a 5.1(side) AC-3 track and a mono track at the plan's 510 kb/s maximum", async () => {
      const input = join(dir, "surround.mka");
      ffmpeg([
        ...["-f", "lavfi", "-i", "sine=f=440:r=48000:d=2", "-f", "lavfi", "-i", "sine=f=880:r=48000:d=2"],
        ...["-filter_complex", "[0:a]pan=5.1(side)|FL=c0|FR=c0|FC=c0|LFE=c0|SL=c0|SR=c0[surround]"],
        ...["-map", "[surround]", "-map", "1:a", "-c:a:0", "ac3", "-c:a:1", "pcm_s16le", input],
      ]);
      const result = await encode(
        plan([output("opus", "webm", { audio: { codec: "opus", bitrateKbps: 510 } })], {
          audioTracks: [{ streamIndex: 0 }, { streamIndex: 1 }],
        }),
        input,
      );
      const probed = probe(result.paths.opus as string);
      expect(probed.streams.map((s) => [s.codec_name, s.channels])).toEqual([
        ["opus", 6],
        ["opus", 1],
      ]);
      expectDuration(probed.durationS, 2_000);
    });

    it("a burned-in subtitle (odd file name) and a translucent watermark, per output, around a removed segment", async () => {
      // Input 1.6-2.4 s is output 0.6-1.4 s once 0.5-1.5 s is removed.
      const subtitlePath = join(dir, "it's: [burn], in; now.srt");
      writeFileSync(subtitlePath, "1\n00:00:01,600 --> 00:00:02,400\nBURNED IN\n");
      const result = await encode(
        plan(
          [
            output("full", "mp4", { video: { codec: "h264", preset: "fastest" } }),
            output("av1", "mkv", {
              video: { codec: "av1", height: 180, preset: "fastest" },
              audio: { codec: "opus", bitrateKbps: 48 },
            }),
          ],
          {
            removedSegments: [{ startMs: 500, endMs: 1_500 }],
            subtitles: [{ uri: "s3://media-in/burn.srt", language: "en", mode: "BURN_IN" }],
            watermark: {
              uri: "s3://media-in/logo.png",
              position: "top-right",
              marginPx: 10,
              opacity: 0.5,
              widthPercent: 25,
            },
          },
        ),
        blackInput,
        { subtitlePaths: [subtitlePath], watermarkPath: join(dir, "logo.png") },
      );
      expect(result.expectedDurationMs).toBe(2_000);

      const full = probe(result.paths.full as string);
      expect(full.streams.map((s) => [s.codec_type, s.codec_name])).toEqual([["video", "h264"]]);
      expectDuration(full.durationS, 2_000);
      const shown = frame(result.paths.full as string, 1.0, 320, 240);
      const hidden = frame(result.paths.full as string, 0.2, 320, 240);
      expect(shown.region(0, 160, 320, 240).max).toBeGreaterThan(150);
      expect(hidden.region(0, 160, 320, 240).max).toBeLessThan(60);
      // 25 % of 320 px: an 80x40 box at x 230..310, y 10..50, half-white over black.
      expect(hidden.region(236, 16, 304, 44).mean).toBeGreaterThan(90);
      expect(hidden.region(236, 16, 304, 44).mean).toBeLessThan(170);
      expect(hidden.region(200, 16, 224, 44).max).toBeLessThan(60);
      expect(hidden.region(236, 56, 304, 80).max).toBeLessThan(60);

      const av1 = probe(result.paths.av1 as string);
      expect(av1.streams.map((s) => [s.codec_type, s.codec_name])).toEqual([
        ["video", "av1"],
        ["audio", "opus"],
      ]);
      expect(ofType(av1.streams, "video")[0]).toMatchObject({ width: 240, height: 180 });
      expectDuration(av1.durationS, 2_000);
      // 25 % of 240 px: a 60x30 box at x 170..230, y 10..40.
      const small = frame(result.paths.av1 as string, 0.2, 240, 180);
      expect(small.region(176, 16, 224, 34).mean).toBeGreaterThan(90);
      expect(small.region(176, 16, 224, 34).mean).toBeLessThan(170);
      expect(small.region(150, 16, 164, 34).max).toBeLessThan(60);
      expect(frame(result.paths.av1 as string, 1.0, 240, 180).region(0, 120, 240, 180).max).toBeGreaterThan(
        150,
      );
    });
  },
);
