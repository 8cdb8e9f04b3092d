/**
 * Real-looking execution plans, good and bad, submitted over HTTP. A good plan is stored in
 * its normalised form; a bad one answers the one 400 envelope listing every failure.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../manager/src/jobs/plan.ts";
import { TestManager } from "../harness/manager.ts";

const JOBS = "/api/v1/operations/jobs";

let manager: TestManager;
let projectId: string;

beforeAll(async () => {
  manager = await TestManager.start();
  ({ projectId } = await manager.createProject());
});
afterAll(() => manager?.close());

type Json = Record<string, unknown>;

const rendition = (height: number, overrides: Json = {}): Json => ({
  id: `${height}p`,
  kind: "FILE",
  container: "mp4",
  destinationUri: `s3://media-out/movies/42/${height}p.mp4`,
  video: { codec: "h264", height, preset: "medium" },
  audio: { codec: "aac", bitrateKbps: 128 },
  ...overrides,
});

/** 1080p/720p/480p H.264 MP4 and a VP9/Opus WebM: the plan most clients send. */
const ladder = () => ({
  input: { uri: "s3://media-in/movies/42/source.mov" },
  outputs: [
    rendition(1080, { video: { codec: "h264", height: 1080, preset: "slow" } }),
    rendition(720, { video: { codec: "h264", height: 720 } }),
    rendition(480, { video: { codec: "libx264", height: 480, preset: "fast" }, audio: { codec: "aac" } }),
    {
      id: "720p-webm",
      kind: "FILE",
      container: "webm",
      destinationUri: "s3://media-out/movies/42/720p.webm",
      video: { codec: "vp9", height: 720 },
      audio: { codec: "opus", bitrateKbps: 96 },
    },
  ],
});

/** A trailer cut from the feature: segments out, a logo in, one subtitle burned in, a manifest. */
const trailer = () => ({
  input: { uri: "s3://media-in/trailers/7/feature.mxf" },
  outputs: [
    rendition(1080, { destinationUri: "s3://media-out/trailers/7/1080p.mp4" }),
    rendition(720, { destinationUri: "s3://media-out/trailers/7/720p.mp4" }),
  ],
  transforms: {
    removedSegments: [
      { startMs: 600000, endMs: 5400000 },
      { startMs: 0, endMs: 12000 },
      { startMs: 12000, endMs: 45000 },
    ],
    subtitles: [{ uri: "s3://media-in/trailers/7/pt-BR.srt", language: "pt-BR", mode: "BURN_IN" }],
    watermark: { uri: "s3://media-in/brand/logo.png", position: "top-right", opacity: 0.8 },
  },
  workspace: { rootDirectory: "/var/lib/tjm/work" },
  manifestUri: "s3://media-out/trailers/7/manifest.json",
});

function submission(executionPlan: unknown, extra: Json = {}): Json {
  return { projectId, executionPlan, ...extra };
}

/** A deep copy of a plan with one change, so each bad case names only what it breaks. */
function changed<T>(plan: T, change: (copy: T & Json) => void): T {
  const copy = structuredClone(plan) as T & Json;
  change(copy);
  return copy;
}

async function jobCount(): Promise<number> {
  const [row] = await manager.sql<{ count: number }[]>`select count(*)::int as count from jobs`;
  return row?.count ?? 0;
}

interface GoodPlan {
  name: string;
  body: () => Json;
  summary: Json;
  storedPlan: Json;
}

const goodPlans: GoodPlan[] = [
  {
    name: "a multi-rendition ladder (1080p/720p/480p H.264 MP4 + VP9/Opus WebM)",
    body: () => submission(ladder()),
    summary: { priority: 0, workerPool: "cpu", requirements: { requiredCapabilities: [] } },
    storedPlan: {
      input: { uri: "s3://media-in/movies/42/source.mov" },
      outputs: [
        rendition(1080, { video: { codec: "h264", height: 1080, preset: "slow" } }),
        rendition(720),
        rendition(480, { video: { codec: "h264", height: 480, preset: "fast" } }),
        {
          id: "720p-webm",
          kind: "FILE",
          container: "webm",
          destinationUri: "s3://media-out/movies/42/720p.webm",
          video: { codec: "vp9", height: 720, preset: "medium" },
          audio: { codec: "opus", bitrateKbps: 96 },
        },
      ],
      transforms: { removedSegments: [], subtitles: [], audioTracks: [] },
    },
  },
  {
    name: "x264 and NVENC preset words are stored as the portable preset they fall in",
    body: () =>
      submission({
        input: { uri: "s3://media-in/movies/42/source.mov" },
        outputs: (
          [
            ["ultrafast", 2160],
            ["veryfast", 1440],
            ["medium", 1080],
            ["p5", 720],
            ["placebo", 480],
            ["p1", 360],
            ["faster", 240],
          ] as const
        ).map(([preset, height]) => rendition(height, { video: { codec: "h264", height, preset } })),
      }),
    summary: { priority: 0, workerPool: "cpu", requirements: { requiredCapabilities: [] } },
    storedPlan: {
      input: { uri: "s3://media-in/movies/42/source.mov" },
      outputs: (
        [
          ["fastest", 2160],
          ["fast", 1440],
          ["medium", 1080],
          ["slow", 720],
          ["slowest", 480],
          ["fastest", 360],
          ["fast", 240],
        ] as const
      ).map(([preset, height]) => rendition(height, { video: { codec: "h264", height, preset } })),
      transforms: { removedSegments: [], subtitles: [], audioTracks: [] },
    },
  },
  {
    name: "an HEVC MKV with soft subtitles and two chosen audio tracks, on NVIDIA",
    body: () =>
      submission(
        {
          input: { uri: "s3://media-in/series/9/s01e01.mkv" },
          outputs: [
            {
              id: "main",
              kind: "FILE",
              container: "mkv",
              destinationUri: "s3://media-out/series/9/s01e01.mkv",
              video: { codec: "hevc", preset: "slowest" },
              audio: { codec: "opus", bitrateKbps: 160 },
            },
            rendition(720, {
              destinationUri: "s3://media-out/series/9/s01e01-720p.mp4",
              video: { codec: "h264_nvenc", height: 720 },
            }),
          ],
          transforms: {
            subtitles: [
              { uri: "s3://media-in/series/9/s01e01.en.srt", language: "en", mode: "SOFT" },
              { uri: "s3://media-in/series/9/s01e01.fa.srt", language: "fa", mode: "SOFT" },
            ],
            audioTracks: [{ streamIndex: 1, language: "en" }, { streamIndex: 0 }],
          },
        },
        { priority: 500, requirements: { requiredCapabilities: ["hevc_nvenc", "scale_cuda", "hevc_nvenc"] } },
      ),
    summary: {
      priority: 500,
      workerPool: "nvidia",
      requirements: { requiredCapabilities: ["hevc_nvenc", "scale_cuda"] },
    },
    storedPlan: {
      input: { uri: "s3://media-in/series/9/s01e01.mkv" },
      outputs: [
        {
          id: "main",
          kind: "FILE",
          container: "mkv",
          destinationUri: "s3://media-out/series/9/s01e01.mkv",
          video: { codec: "hevc", preset: "slowest" },
          audio: { codec: "opus", bitrateKbps: 160 },
        },
        rendition(720, { destinationUri: "s3://media-out/series/9/s01e01-720p.mp4" }),
      ],
      transforms: {
        removedSegments: [],
        subtitles: [
          { uri: "s3://media-in/series/9/s01e01.en.srt", language: "en", mode: "SOFT" },
          { uri: "s3://media-in/series/9/s01e01.fa.srt", language: "fa", mode: "SOFT" },
        ],
        audioTracks: [{ streamIndex: 1, language: "en" }, { streamIndex: 0 }],
      },
    },
  },
  {
    name: "a trailer with removed segments, a watermark, a burned-in subtitle and a manifest, unknown fields stripped",
    body: () => {
      const plan = changed(trailer(), (copy) => {
        Object.assign(copy, { notes: "for the festival" });
        Object.assign(copy.outputs[0] as Json, { thumbnail: true });
        Object.assign(copy.transforms, { colour: "warm" });
        Object.assign(copy.transforms.watermark, { animate: "fade" });
        Object.assign(copy.transforms.subtitles[0] as Json, { forced: true });
        Object.assign(copy.workspace, { keep: true });
      });
      return submission(plan, { requirements: { requiredCapabilities: ["libx264"] }, callbackUrl: "x" });
    },
    summary: { priority: 0, workerPool: "cpu", requirements: { requiredCapabilities: ["libx264"] } },
    storedPlan: {
      ...trailer(),
      transforms: {
        ...trailer().transforms,
        audioTracks: [],
        watermark: { uri: "s3://media-in/brand/logo.png", position: "top-right", marginPx: 16, opacity: 0.8 },
      },
    },
  },
  {
    name: "an audio-only MP3 extract in MPEG-TS at 320 kb/s with the lowest priority",
    body: () =>
      submission(
        {
          input: { uri: "s3://media-in/podcasts/3/episode.wav" },
          outputs: [
            {
              id: "mp3",
              kind: "FILE",
              container: "mpegts",
              destinationUri: "s3://media-out/podcasts/3/episode.ts",
              audio: { codec: "mp3", bitrateKbps: 320 },
            },
          ],
          transforms: { removedSegments: [{ startMs: 0, endMs: 30000 }], audioTracks: [{ streamIndex: 2 }] },
        },
        { priority: -1000 },
      ),
    summary: { priority: -1000, workerPool: "cpu", requirements: { requiredCapabilities: [] } },
    storedPlan: {
      input: { uri: "s3://media-in/podcasts/3/episode.wav" },
      outputs: [
        {
          id: "mp3",
          kind: "FILE",
          container: "mpegts",
          destinationUri: "s3://media-out/podcasts/3/episode.ts",
          audio: { codec: "mp3", bitrateKbps: 320 },
        },
      ],
      transforms: {
        removedSegments: [{ startMs: 0, endMs: 30000 }],
        subtitles: [],
        audioTracks: [{ streamIndex: 2 }],
      },
    },
  },
];

describe("a good plan is stored in its normalised form", () => {
  it.each(goodPlans)("$name", async ({ body, summary, storedPlan }) => {
    const submitted = await manager.request(JOBS, { method: "POST", json: body() });
    expect(submitted.status).toBe(201);
    const job = await submitted.json();
    expect(job).toMatchObject({ projectId, state: "QUEUED", ...summary });

    const got = await manager.request(`${JOBS}/${job.id}`);
    expect(got.status).toBe(200);
    const detail = await got.json();
    expect(detail.executionPlan).toEqual(storedPlan);
    const [row] = await manager.sql`select execution_plan from jobs where id = ${job.id}`;
    expect(row?.executionPlan).toEqual(storedPlan);
  });
});

interface BadRequest {
  name: string;
  request: () => RequestInit & { json?: unknown };
  details: { path: string; message: string }[];
}

const post = (body: unknown) => () => ({ json: body });
const postPlan =
  (plan: () => unknown, extra: Json = {}) =>
  () => ({ json: submission(plan(), extra) });

const enumOf = (...values: string[]) =>
  `Invalid option: expected one of ${values.map((value) => `"${value}"`).join("|")}`;

const badRequests: BadRequest[] = [
  {
    name: "six independent failures in different places are all reported at once",
    request: postPlan(
      () =>
        changed(trailer(), (plan) => {
          plan.input.uri = "http://media-in/trailers/7/feature.mxf";
          (plan.outputs[1] as { video: Json }).video.height = 721;
          plan.transforms.removedSegments.push({ startMs: 30000, endMs: 60000 });
          plan.transforms.subtitles.push({
            uri: "s3://media-in/trailers/7/en.srt",
            language: "en",
            mode: "BURN_IN",
          });
        }),
      { priority: 5000, requirements: { requiredCapabilities: ["h264_nvenc", "h264_qsv"] } },
    ),
    details: [
      { path: "priority", message: "Too big: expected number to be <=1000" },
      { path: "executionPlan.input.uri", message: "must be an s3://bucket/key URI" },
      { path: "executionPlan.outputs.1.video.height", message: "height must be an even number" },
      {
        path: "executionPlan.transforms.removedSegments.3",
        message: "overlaps transforms.removedSegments.2",
      },
      {
        path: "executionPlan.transforms.subtitles.1.mode",
        message: "at most one subtitle may be burned in (transforms.subtitles.0 already is)",
      },
      {
        path: "requirements.requiredCapabilities",
        message: "capabilities need more than one hardware vendor (intel, nvidia)",
      },
    ],
  },
  {
    name: "unknown enum values are each named with the allowed ones",
    request: postPlan(() =>
      changed(trailer(), (plan) => {
        Object.assign(plan.outputs[0] as Json, { kind: "HLS", container: "avi" });
        (plan.outputs[1] as { video: Json }).video = { codec: "libx265", preset: "turbo" };
        (plan.transforms.subtitles[0] as Json).mode = "HARD";
        plan.transforms.watermark.position = "middle";
      }),
    ),
    details: [
      { path: "executionPlan.outputs.0.kind", message: 'Invalid input: expected "FILE"' },
      { path: "executionPlan.outputs.0.container", message: enumOf("mp4", "mov", "mkv", "webm", "mpegts") },
      {
        path: "executionPlan.outputs.1.video.codec",
        message: enumOf("h264", "hevc", "av1", "vp9", "libx264", "h264_nvenc", "h264_qsv"),
      },
      {
        path: "executionPlan.outputs.1.video.preset",
        message: enumOf(
          "fastest",
          "fast",
          "medium",
          "slow",
          "slowest",
          "ultrafast",
          "superfast",
          "p1",
          "p2",
          "veryfast",
          "faster",
          "p3",
          "p4",
          "p5",
          "slower",
          "veryslow",
          "placebo",
          "p6",
          "p7",
        ),
      },
      { path: "executionPlan.transforms.subtitles.0.mode", message: enumOf("BURN_IN", "SOFT") },
      {
        path: "executionPlan.transforms.watermark.position",
        message: enumOf("top-left", "top-right", "bottom-left", "bottom-right", "center"),
      },
    ],
  },
  {
    name: "a height both above the maximum and odd reports both",
    request: postPlan(() =>
      changed(ladder(), (plan) =>
        Object.assign(plan.outputs[0] as Json, { video: { codec: "h264", height: 4321 } }),
      ),
    ),
    details: [
      { path: "executionPlan.outputs.0.video.height", message: "Too big: expected number to be <=4320" },
      { path: "executionPlan.outputs.0.video.height", message: "height must be an even number" },
    ],
  },
  {
    name: "an even height below the minimum, a fractional height and a height given as text",
    request: postPlan(() =>
      changed(ladder(), (plan) => {
        (plan.outputs[0] as { video: Json }).video.height = 100;
        (plan.outputs[1] as { video: Json }).video.height = 720.5;
        (plan.outputs[2] as { video: Json }).video.height = "480";
      }),
    ),
    details: [
      { path: "executionPlan.outputs.0.video.height", message: "Too small: expected number to be >=144" },
      {
        path: "executionPlan.outputs.1.video.height",
        message: "Invalid input: expected int, received number",
      },
      {
        path: "executionPlan.outputs.2.video.height",
        message: "Invalid input: expected number, received string",
      },
    ],
  },
  {
    name: "a priority above 1000",
    request: postPlan(ladder, { priority: 1001 }),
    details: [{ path: "priority", message: "Too big: expected number to be <=1000" }],
  },
  {
    name: "a priority below -1000",
    request: postPlan(ladder, { priority: -1001 }),
    details: [{ path: "priority", message: "Too small: expected number to be >=-1000" }],
  },
  {
    name: "a fractional priority",
    request: postPlan(ladder, { priority: 1.5 }),
    details: [{ path: "priority", message: "Invalid input: expected int, received number" }],
  },
  {
    name: `more than ${limits.outputs} outputs`,
    request: postPlan(() => ({
      ...ladder(),
      outputs: Array.from({ length: limits.outputs + 1 }, (_, index) =>
        rendition(720, { id: `take-${index}`, destinationUri: `s3://media-out/movies/42/take-${index}.mp4` }),
      ),
    })),
    details: [{ path: "executionPlan.outputs", message: `at most ${limits.outputs} outputs are allowed` }],
  },
  {
    name: "no outputs",
    request: postPlan(() => ({ ...ladder(), outputs: [] })),
    details: [{ path: "executionPlan.outputs", message: "at least one output is required" }],
  },
  {
    name: "a relative workspace path",
    request: postPlan(() => ({ ...ladder(), workspace: { rootDirectory: "work/tjm" } })),
    details: [{ path: "executionPlan.workspace.rootDirectory", message: "must be an absolute path" }],
  },
  {
    name: "a workspace path climbing out with '..'",
    request: postPlan(() => ({ ...ladder(), workspace: { rootDirectory: "/var/lib/tjm/../../../etc" } })),
    details: [{ path: "executionPlan.workspace.rootDirectory", message: "must not contain '..' segments" }],
  },
  {
    name: "fields of the wrong type",
    request: postPlan(
      () => ({
        input: "s3://media-in/movies/42/source.mov",
        outputs: { "720p": rendition(720) },
        transforms: [],
        manifestUri: 42,
      }),
      { priority: "high", requirements: { requiredCapabilities: "libx264" } },
    ),
    details: [
      { path: "priority", message: "Invalid input: expected number, received string" },
      {
        path: "requirements.requiredCapabilities",
        message: "Invalid input: expected array, received string",
      },
      { path: "executionPlan.input", message: "Invalid input: expected object, received string" },
      { path: "executionPlan.outputs", message: "Invalid input: expected array, received object" },
      { path: "executionPlan.transforms", message: "Invalid input: expected object, received array" },
      { path: "executionPlan.manifestUri", message: "Invalid input: expected string, received number" },
    ],
  },
  {
    name: "a missing executionPlan",
    request: () => ({ json: { projectId } }),
    details: [{ path: "executionPlan", message: "required" }],
  },
  {
    name: "a projectId that is not a UUID",
    request: () => ({ json: { projectId: "project-42", executionPlan: ladder() } }),
    details: [{ path: "projectId", message: "must be a UUID" }],
  },
  {
    name: "a body that is an array",
    request: () => ({ json: [submission(ladder())] }),
    details: [{ path: "body", message: "Invalid input: expected object, received array" }],
  },
  {
    name: "a body that is null",
    request: post(null),
    details: [{ path: "body", message: "Invalid input: expected object, received null" }],
  },
  {
    name: "a body that is a string",
    request: post("please transcode"),
    details: [{ path: "body", message: "Invalid input: expected object, received string" }],
  },
  {
    name: "malformed JSON",
    request: () => ({ body: '{"projectId": ', headers: { "content-type": "application/json" } }),
    details: [{ path: "body", message: "Malformed JSON in request body" }],
  },
  {
    name: "no body at all",
    request: () => ({}),
    details: [
      { path: "projectId", message: "required" },
      { path: "executionPlan", message: "required" },
    ],
  },
  {
    name: "locations that are not s3://bucket/key or collide",
    request: postPlan(() =>
      changed(trailer(), (plan) => {
        (plan.outputs[0] as Json).destinationUri = plan.input.uri;
        (plan.outputs[1] as Json).destinationUri = plan.input.uri;
        plan.manifestUri = "s3://media-out/";
        (plan.transforms.subtitles[0] as Json).uri = "s3://Media-In/trailers/7/pt-BR.srt";
        plan.transforms.watermark.uri = "s3://media-in";
      }),
    ),
    details: [
      {
        path: "executionPlan.transforms.subtitles.0.uri",
        message: "bucket name may hold only lowercase letters, digits, dots and hyphens",
      },
      {
        path: "executionPlan.transforms.watermark.uri",
        message: "must be an s3://bucket/key URI: the object key is missing",
      },
      { path: "executionPlan.manifestUri", message: "object key must not be empty" },
      { path: "executionPlan.outputs.0.destinationUri", message: "must not overwrite the input" },
      {
        path: "executionPlan.outputs.1.destinationUri",
        message: "two outputs write to the same location (also outputs.0.destinationUri)",
      },
      { path: "executionPlan.outputs.1.destinationUri", message: "must not overwrite the input" },
    ],
  },
  {
    name: "a manifest written over an output",
    request: postPlan(() => ({ ...ladder(), manifestUri: "s3://media-out/movies/42/480p.mp4" })),
    details: [
      {
        path: "executionPlan.manifestUri",
        message: "must differ from every output location (same as outputs.2.destinationUri)",
      },
    ],
  },
  {
    name: "codecs their containers cannot carry (webm+h264, mpegts+opus, mov+av1)",
    request: postPlan(() =>
      changed(ladder(), (plan) => {
        (plan.outputs[0] as Json).container = "webm";
        (plan.outputs[1] as Json).container = "mpegts";
        (plan.outputs[1] as Json).audio = { codec: "opus" };
        (plan.outputs[2] as Json).container = "mov";
        (plan.outputs[2] as Json).video = { codec: "av1", height: 480 };
      }),
    ),
    details: [
      {
        path: "executionPlan.outputs.0.video.codec",
        message: "container webm cannot carry h264 video; use vp9 or av1",
      },
      {
        path: "executionPlan.outputs.0.audio.codec",
        message: "container webm cannot carry aac audio; use opus",
      },
      {
        path: "executionPlan.outputs.1.audio.codec",
        message: "container mpegts cannot carry opus audio; use aac or mp3",
      },
      {
        path: "executionPlan.outputs.2.video.codec",
        message: "container mov cannot carry av1 video; use h264 or hevc",
      },
    ],
  },
  {
    name: "an mp3 bitrate above both the general and the mp3 maximum reports both",
    request: postPlan(() =>
      changed(ladder(), (plan) => {
        (plan.outputs[0] as Json).audio = { codec: "mp3", bitrateKbps: 600 };
        (plan.outputs[1] as Json).audio = { codec: "mp3", bitrateKbps: 384 };
      }),
    ),
    details: [
      { path: "executionPlan.outputs.0.audio.bitrateKbps", message: "Too big: expected number to be <=512" },
      { path: "executionPlan.outputs.0.audio.bitrateKbps", message: "mp3 allows at most 320 kb/s" },
      { path: "executionPlan.outputs.1.audio.bitrateKbps", message: "mp3 allows at most 320 kb/s" },
    ],
  },
  {
    name: "an output with neither video nor audio",
    request: postPlan(() =>
      changed(ladder(), (plan) => {
        (plan.outputs[3] as Json).video = undefined;
        (plan.outputs[3] as Json).audio = undefined;
      }),
    ),
    details: [{ path: "executionPlan.outputs.3", message: "an output needs video, audio or both" }],
  },
  {
    name: "a removed segment ending at its start and two nested ones",
    request: postPlan(() => ({
      ...ladder(),
      transforms: {
        removedSegments: [
          { startMs: 5000, endMs: 5000 },
          { startMs: 10000, endMs: 60000 },
          { startMs: 20000, endMs: 30000 },
        ],
      },
    })),
    details: [
      {
        path: "executionPlan.transforms.removedSegments.0.endMs",
        message: "endMs must be greater than startMs",
      },
      {
        path: "executionPlan.transforms.removedSegments.2",
        message: "overlaps transforms.removedSegments.1",
      },
    ],
  },
  {
    name: "a soft subtitle with an MPEG-TS output",
    request: postPlan(() => ({
      ...ladder(),
      outputs: [rendition(720, { container: "mpegts", destinationUri: "s3://media-out/movies/42/720p.ts" })],
      transforms: { subtitles: [{ uri: "s3://media-in/movies/42/en.srt", language: "en", mode: "SOFT" }] },
    })),
    details: [
      {
        path: "executionPlan.outputs.0.container",
        message:
          "container mpegts cannot carry soft subtitles (transforms.subtitles.0); burn it in or use mp4, mov, mkv or webm",
      },
    ],
  },
  {
    name: "a burned-in subtitle and a watermark with audio-only outputs",
    request: postPlan(() =>
      changed(trailer(), (plan) => {
        for (const output of plan.outputs) (output as Json).video = undefined;
      }),
    ),
    details: [
      {
        path: "executionPlan.transforms.subtitles.0.mode",
        message: "a burned-in subtitle needs at least one output with video",
      },
      {
        path: "executionPlan.transforms.watermark",
        message: "a watermark needs at least one output with video",
      },
    ],
  },
  {
    name: "an audio stream selected twice",
    request: postPlan(() => ({
      ...ladder(),
      transforms: {
        audioTracks: [
          { streamIndex: 0, language: "en" },
          { streamIndex: 0, language: "de" },
        ],
      },
    })),
    details: [
      {
        path: "executionPlan.transforms.audioTracks.1.streamIndex",
        message: "audio stream 0 is already selected by transforms.audioTracks.0",
      },
    ],
  },
  {
    name: "a repeated output id",
    request: postPlan(() =>
      changed(ladder(), (plan) => {
        (plan.outputs[3] as Json).id = "1080p";
      }),
    ),
    details: [
      { path: "executionPlan.outputs.3.id", message: "duplicate output id '1080p' (also outputs.0.id)" },
    ],
  },
  {
    name: "a container named like an object property, with a soft subtitle",
    request: postPlan(() => ({
      ...ladder(),
      outputs: [rendition(720, { container: "constructor" })],
      transforms: { subtitles: [{ uri: "s3://media-in/movies/42/en.srt", language: "en", mode: "SOFT" }] },
    })),
    details: [
      { path: "executionPlan.outputs.0.container", message: enumOf("mp4", "mov", "mkv", "webm", "mpegts") },
    ],
  },
];

describe("a bad request answers 400 listing every failure and stores nothing", () => {
  it.each(badRequests)("$name", async ({ request, details }) => {
    const before = await jobCount();
    const response = await manager.request(JOBS, { method: "POST", ...request() });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: "Validation failed",
      code: "validation.failed",
      requestId: response.headers.get("x-request-id"),
      // Each failure's code is pinned where it is decided (tests/errors.test.ts, tests/openapi).
      details: details.map((detail) => ({ ...detail, code: expect.stringMatching(/^[a-z]+(\.[a-z_]+)+$/) })),
    });
    expect(await jobCount()).toBe(before);
  });
});

describe("a body that is not declared as JSON answers 415 and stores nothing", () => {
  it.each([
    ["sent as text/plain", { "content-type": "text/plain" }],
    ["sent as a form", { "content-type": "application/x-www-form-urlencoded" }],
    ["sent without a content-type", {}],
  ])("a JSON submission %s", async (_name, headers) => {
    const before = await jobCount();
    const body = new Blob([JSON.stringify(submission(ladder()))]);
    const response = await manager.request(JOBS, { method: "POST", body, headers });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ statusCode: 415, message: "Unsupported Media Type" });
    expect(await jobCount()).toBe(before);
  });
});
