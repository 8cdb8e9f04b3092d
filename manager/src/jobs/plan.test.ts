import { describe, expect, it } from "vitest";
import {
  deriveWorkerPool,
  normaliseVideoCodec,
  normaliseVideoPreset,
  planRuleIssues,
  presetAliasTable,
} from "./plan.ts";

type Json = Record<string, unknown>;

const INPUT = "s3://media-in/movies/42/source.mov";

function output(overrides: Json = {}): Json {
  return {
    id: "720p",
    kind: "FILE",
    container: "mp4",
    destinationUri: "s3://media-out/movies/42/720p.mp4",
    video: { codec: "h264", height: 720 },
    audio: { codec: "aac", bitrateKbps: 128 },
    ...overrides,
  };
}

const audioOnly = (overrides: Json = {}) =>
  output({
    id: "audio",
    destinationUri: "s3://media-out/movies/42/audio.m4a",
    video: undefined,
    ...overrides,
  });

function plan(overrides: Json = {}): Json {
  return { input: { uri: INPUT }, outputs: [output()], ...overrides };
}

const subtitle = (mode: string, language = "en") => ({
  uri: `s3://media-in/movies/42/${language}.srt`,
  language,
  mode,
});

const segments = (...spans: [number, number][]) => ({
  removedSegments: spans.map(([startMs, endMs]) => ({ startMs, endMs })),
});

describe("deriveWorkerPool", () => {
  it.each([
    ["an nvenc encoder", "nvidia", ["h264_nvenc"]],
    ["a cuda filter", "nvidia", ["scale_cuda"]],
    ["a cuvid decoder", "nvidia", ["h264_cuvid"]],
    ["nvdec", "nvidia", ["nvdec"]],
    ["an npp filter", "nvidia", ["scale_npp"]],
    ["an upper-case nvenc name", "nvidia", ["HEVC_NVENC"]],
    ["a qsv encoder", "intel", ["h264_qsv"]],
    ["a qsv filter", "intel", ["vpp_qsv"]],
    ["an amf encoder", "amd", ["hevc_amf"]],
    ["only software encoders", "cpu", ["libx264", "aac"]],
    ["nothing", "cpu", []],
    ["one vendor's names beside software names", "nvidia", ["h264_nvenc", "scale_cuda", "libx264"]],
  ])("a job needing %s runs on the %s pool", (_name, pool, capabilities) => {
    expect(deriveWorkerPool(capabilities)).toEqual({ ok: true, pool });
  });

  it("capabilities of two vendors are refused, naming both", () => {
    expect(deriveWorkerPool(["h264_nvenc", "hevc_amf"])).toEqual({
      ok: false,
      problem: "capabilities need more than one hardware vendor (amd, nvidia)",
    });
  });

  it("capabilities of three vendors are refused, naming each once in order", () => {
    expect(deriveWorkerPool(["h264_qsv", "h264_nvenc", "hevc_amf", "scale_cuda"])).toEqual({
      ok: false,
      problem: "capabilities need more than one hardware vendor (amd, intel, nvidia)",
    });
  });
});

describe("normaliseVideoCodec", () => {
  it.each(["libx264", "h264_nvenc", "h264_qsv"])("the legacy name %s becomes h264", (codec) => {
    expect(normaliseVideoCodec(codec)).toBe("h264");
  });

  it.each(["h264", "hevc", "av1", "vp9"])("the portable codec %s stays as it is", (codec) => {
    expect(normaliseVideoCodec(codec)).toBe(codec);
  });

  it("a backend name that is not a legacy H.264 name is left for the schema to refuse", () => {
    expect(normaliseVideoCodec("hevc_nvenc")).toBe("hevc_nvenc");
  });
});

describe("normaliseVideoPreset", () => {
  it.each([
    ["ultrafast", "fastest"],
    ["superfast", "fastest"],
    ["p1", "fastest"],
    ["p2", "fastest"],
    ["veryfast", "fast"],
    ["faster", "fast"],
    ["p3", "fast"],
    ["p4", "medium"],
    ["p5", "slow"],
    ["slower", "slowest"],
    ["veryslow", "slowest"],
    ["placebo", "slowest"],
    ["p6", "slowest"],
    ["p7", "slowest"],
  ] as const)("%s is stored as %s", (alias, portable) => {
    expect(normaliseVideoPreset(alias)).toBe(portable);
  });

  it.each(["fastest", "fast", "medium", "slow", "slowest"] as const)(
    "the portable preset %s means itself",
    (preset) => {
      expect(normaliseVideoPreset(preset)).toBe(preset);
    },
  );

  it("the table in the OpenAPI description lists every alias under its portable preset", () => {
    expect(presetAliasTable()).toBe(
      [
        "| portable | x264 / x265 words | NVENC |",
        "|---|---|---|",
        "| fastest | ultrafast, superfast | p1, p2 |",
        "| fast | veryfast, faster | p3 |",
        "| medium | (medium) | p4 |",
        "| slow | (slow) | p5 |",
        "| slowest | slower, veryslow, placebo | p6, p7 |",
      ].join("\n"),
    );
  });
});

describe("planRuleIssues", () => {
  it("a plain plan has no issues", () => {
    expect(planRuleIssues(plan())).toEqual([]);
  });

  it("a plan using every transform correctly has no issues", () => {
    const full = plan({
      outputs: [
        output(),
        output({
          id: "webm",
          container: "webm",
          destinationUri: "s3://media-out/movies/42/720p.webm",
          video: { codec: "vp9", height: 720 },
          audio: { codec: "opus", bitrateKbps: 510 },
        }),
        audioOnly({ container: "mpegts", audio: { codec: "mp3", bitrateKbps: 320 } }),
      ],
      transforms: {
        ...segments([0, 1000], [1000, 2000], [5000, 6000]),
        subtitles: [subtitle("BURN_IN", "en")],
        audioTracks: [{ streamIndex: 0 }, { streamIndex: 2 }],
        watermark: { uri: "s3://media-in/brand/logo.png" },
      },
      manifestUri: "s3://media-out/movies/42/manifest.json",
    });
    expect(planRuleIssues(full)).toEqual([]);
  });

  it("a repeated output id is refused at the repeat, naming the first", () => {
    const outputs = [
      output(),
      output({ destinationUri: "s3://media-out/b.mp4" }),
      output({ destinationUri: "s3://media-out/c.mp4" }),
    ];
    expect(planRuleIssues(plan({ outputs }))).toEqual([
      { path: ["outputs", 1, "id"], message: "duplicate output id '720p' (also outputs.0.id)" },
      { path: ["outputs", 2, "id"], message: "duplicate output id '720p' (also outputs.0.id)" },
    ]);
  });

  it("two outputs writing to the same location are refused", () => {
    const outputs = [output(), output({ id: "720p-copy" })];
    expect(planRuleIssues(plan({ outputs }))).toEqual([
      {
        path: ["outputs", 1, "destinationUri"],
        message: "two outputs write to the same location (also outputs.0.destinationUri)",
      },
    ]);
  });

  it("an output writing over the input is refused", () => {
    expect(planRuleIssues(plan({ outputs: [output({ destinationUri: INPUT })] }))).toEqual([
      { path: ["outputs", 0, "destinationUri"], message: "must not overwrite the input" },
    ]);
  });

  it("a manifest written over the input is refused", () => {
    expect(planRuleIssues(plan({ manifestUri: INPUT }))).toEqual([
      { path: ["manifestUri"], message: "must not overwrite the input" },
    ]);
  });

  it("a manifest written over an output is refused", () => {
    const outputs = [output({ id: "a", destinationUri: "s3://media-out/a.mp4" }), output()];
    expect(planRuleIssues(plan({ outputs, manifestUri: "s3://media-out/movies/42/720p.mp4" }))).toEqual([
      {
        path: ["manifestUri"],
        message: "must differ from every output location (same as outputs.1.destinationUri)",
      },
    ]);
  });

  it.each([
    ["webm", "h264", "container webm cannot carry h264 video; use vp9 or av1"],
    ["webm", "hevc", "container webm cannot carry hevc video; use vp9 or av1"],
    ["webm", "libx264", "container webm cannot carry h264 video; use vp9 or av1"],
    ["mov", "av1", "container mov cannot carry av1 video; use h264 or hevc"],
    ["mov", "vp9", "container mov cannot carry vp9 video; use h264 or hevc"],
    ["mpegts", "av1", "container mpegts cannot carry av1 video; use h264 or hevc"],
    ["mpegts", "vp9", "container mpegts cannot carry vp9 video; use h264 or hevc"],
  ])("%s with %s video is refused", (container, codec, message) => {
    const outputs = [output({ container, video: { codec }, audio: undefined })];
    expect(planRuleIssues(plan({ outputs }))).toEqual([{ path: ["outputs", 0, "video", "codec"], message }]);
  });

  it.each(["mov", "mkv", "webm", "mpegts"])(
    "a fragmented %s output is refused: only mp4 fragments",
    (container) => {
      const outputs = [output({ container, fragmented: true, video: undefined, audio: undefined })];
      expect(planRuleIssues(plan({ outputs }))).toContainEqual({
        path: ["outputs", 0, "fragmented"],
        message: `only mp4 outputs can be fragmented, not ${container}`,
      });
    },
  );

  it("a fragmented mp4 output is accepted", () => {
    expect(planRuleIssues(plan({ outputs: [output({ container: "mp4", fragmented: true })] }))).toEqual([]);
  });

  it.each([
    ["webm", "aac", "container webm cannot carry aac audio; use opus"],
    ["webm", "mp3", "container webm cannot carry mp3 audio; use opus"],
    ["mov", "opus", "container mov cannot carry opus audio; use aac or mp3"],
    ["mpegts", "opus", "container mpegts cannot carry opus audio; use aac or mp3"],
  ])("%s with %s audio is refused", (container, codec, message) => {
    const outputs = [output({ container, video: undefined, audio: { codec, bitrateKbps: 128 } })];
    expect(planRuleIssues(plan({ outputs }))).toEqual([{ path: ["outputs", 0, "audio", "codec"], message }]);
  });

  it.each([
    ["mp4", "vp9", "opus"],
    ["mp4", "av1", "mp3"],
    ["mov", "hevc", "aac"],
    ["mkv", "av1", "opus"],
    ["webm", "av1", "opus"],
    ["mpegts", "hevc", "mp3"],
    ["mpegts", "h264_qsv", "aac"],
  ])("%s carrying %s video and %s audio is accepted", (container, videoCodec, audioCodec) => {
    const outputs = [output({ container, video: { codec: videoCodec }, audio: { codec: audioCodec } })];
    expect(planRuleIssues(plan({ outputs }))).toEqual([]);
  });

  it("codecs the schema does not know are left to the schema", () => {
    const outputs = [output({ container: "webm", video: { codec: "xvid" }, audio: { codec: "flac" } })];
    expect(planRuleIssues(plan({ outputs }))).toEqual([]);
  });

  it.each([
    ["mp3", 321, "mp3 allows at most 320 kb/s"],
    ["opus", 511, "opus allows at most 510 kb/s"],
    ["aac", 513, "aac allows at most 512 kb/s"],
  ])("%s audio above its own maximum (%i kb/s) is refused", (codec, bitrateKbps, message) => {
    const outputs = [output({ container: "mkv", audio: { codec, bitrateKbps } })];
    expect(planRuleIssues(plan({ outputs }))).toEqual([
      { path: ["outputs", 0, "audio", "bitrateKbps"], message },
    ]);
  });

  it.each([
    ["mp3", 320],
    ["opus", 510],
    ["aac", 512],
  ])("%s audio at exactly its maximum (%i kb/s) is accepted", (codec, bitrateKbps) => {
    const outputs = [output({ container: "mkv", audio: { codec, bitrateKbps } })];
    expect(planRuleIssues(plan({ outputs }))).toEqual([]);
  });

  it("an output with neither video nor audio is refused", () => {
    const outputs = [output({ video: undefined, audio: undefined })];
    expect(planRuleIssues(plan({ outputs }))).toEqual([
      { path: ["outputs", 0], message: "an output needs video, audio or both" },
    ]);
  });

  it.each([
    ["equal to", 5000],
    ["before", 4000],
  ])("a removed segment ending %s its start is refused", (_relation, endMs) => {
    expect(planRuleIssues(plan({ transforms: segments([0, 1000], [5000, endMs]) }))).toEqual([
      { path: ["transforms", "removedSegments", 1, "endMs"], message: "endMs must be greater than startMs" },
    ]);
  });

  it.each<[string, [number, number][], [number, number][]]>([
    [
      "overlapping segments in order",
      [
        [0, 5000],
        [4000, 8000],
      ],
      [[1, 0]],
    ],
    [
      "overlapping segments out of order",
      [
        [10000, 20000],
        [0, 15000],
      ],
      [[1, 0]],
    ],
    [
      "a segment nested inside an earlier one",
      [
        [0, 10000],
        [2000, 3000],
      ],
      [[1, 0]],
    ],
    [
      "a segment wrapping a later one",
      [
        [2000, 3000],
        [0, 10000],
      ],
      [[1, 0]],
    ],
    [
      "identical segments",
      [
        [0, 1000],
        [0, 1000],
      ],
      [[1, 0]],
    ],
    [
      "two segments inside one long one",
      [
        [0, 10000],
        [1000, 2000],
        [5000, 6000],
      ],
      [
        [1, 0],
        [2, 0],
      ],
    ],
    [
      "a chain where each overlaps the next",
      [
        [0, 2000],
        [1000, 3000],
        [2500, 4000],
      ],
      [
        [1, 0],
        [2, 1],
      ],
    ],
  ])("%s: the later one is refused as overlapping", (_name, spans, overlaps) => {
    expect(planRuleIssues(plan({ transforms: segments(...spans) }))).toEqual(
      overlaps.map(([later, earlier]) => ({
        path: ["transforms", "removedSegments", later],
        message: `overlaps transforms.removedSegments.${earlier}`,
      })),
    );
  });

  it("touching removed segments do not overlap", () => {
    expect(planRuleIssues(plan({ transforms: segments([1000, 2000], [0, 1000], [2000, 3000]) }))).toEqual([]);
  });

  it("a removed segment that ends before it starts is not also reported as overlapping", () => {
    expect(planRuleIssues(plan({ transforms: segments([0, 10000], [6000, 5000]) }))).toEqual([
      { path: ["transforms", "removedSegments", 1, "endMs"], message: "endMs must be greater than startMs" },
    ]);
  });

  it("a second and third burned-in subtitle are refused, naming the first", () => {
    const subtitles = [
      subtitle("SOFT", "fa"),
      subtitle("BURN_IN", "en"),
      subtitle("BURN_IN", "de"),
      subtitle("BURN_IN", "fr"),
    ];
    expect(planRuleIssues(plan({ transforms: { subtitles } }))).toEqual([
      {
        path: ["transforms", "subtitles", 2, "mode"],
        message: "at most one subtitle may be burned in (transforms.subtitles.1 already is)",
      },
      {
        path: ["transforms", "subtitles", 3, "mode"],
        message: "at most one subtitle may be burned in (transforms.subtitles.1 already is)",
      },
    ]);
  });

  it("a burned-in subtitle without any video output is refused", () => {
    const transforms = { subtitles: [subtitle("SOFT", "fa"), subtitle("BURN_IN")] };
    expect(planRuleIssues(plan({ outputs: [audioOnly()], transforms }))).toEqual([
      {
        path: ["transforms", "subtitles", 1, "mode"],
        message: "a burned-in subtitle needs at least one output with video",
      },
    ]);
  });

  it("a soft subtitle is refused for every mpegts output, naming the first soft subtitle", () => {
    const outputs = [
      output({ container: "mpegts" }),
      output({ id: "mkv", container: "mkv", destinationUri: "s3://media-out/movies/42/720p.mkv" }),
      audioOnly({ container: "mpegts" }),
    ];
    const transforms = { subtitles: [subtitle("BURN_IN"), subtitle("SOFT", "fa"), subtitle("SOFT", "de")] };
    const message =
      "container mpegts cannot carry soft subtitles (transforms.subtitles.1); burn it in or use mp4, mov, mkv or webm";
    expect(planRuleIssues(plan({ outputs, transforms }))).toEqual([
      { path: ["outputs", 0, "container"], message },
      { path: ["outputs", 2, "container"], message },
    ]);
  });

  it("a burned-in subtitle with an mpegts output is accepted", () => {
    const outputs = [output({ container: "mpegts" })];
    expect(planRuleIssues(plan({ outputs, transforms: { subtitles: [subtitle("BURN_IN")] } }))).toEqual([]);
  });

  it("an audio stream selected twice is refused at the repeat", () => {
    const audioTracks = [{ streamIndex: 1 }, { streamIndex: 0, language: "en" }, { streamIndex: 1 }];
    expect(planRuleIssues(plan({ transforms: { audioTracks } }))).toEqual([
      {
        path: ["transforms", "audioTracks", 2, "streamIndex"],
        message: "audio stream 1 is already selected by transforms.audioTracks.0",
      },
    ]);
  });

  it("a watermark without any video output is refused", () => {
    const transforms = { watermark: { uri: "s3://media-in/brand/logo.png" } };
    expect(planRuleIssues(plan({ outputs: [audioOnly()], transforms }))).toEqual([
      { path: ["transforms", "watermark"], message: "a watermark needs at least one output with video" },
    ]);
  });

  it("rules that need outputs stay quiet when there are none, leaving that to the schema", () => {
    const transforms = { subtitles: [subtitle("BURN_IN")], watermark: { uri: "s3://media-in/logo.png" } };
    expect(planRuleIssues(plan({ outputs: [], transforms }))).toEqual([]);
  });

  it("every broken rule is reported at once, in the order of the plan's parts", () => {
    const broken = plan({
      outputs: [audioOnly({ id: "a", container: "webm", destinationUri: INPUT }), audioOnly({ id: "a" })],
      transforms: {
        ...segments([0, 2000], [1000, 3000]),
        subtitles: [subtitle("BURN_IN"), subtitle("BURN_IN", "de")],
        audioTracks: [{ streamIndex: 0 }, { streamIndex: 0 }],
        watermark: { uri: "s3://media-in/brand/logo.png" },
      },
      manifestUri: INPUT,
    });
    expect(planRuleIssues(broken).map((issue) => issue.path.join("."))).toEqual([
      "outputs.0.destinationUri",
      "outputs.0.audio.codec",
      "outputs.1.id",
      "manifestUri",
      "manifestUri",
      "transforms.removedSegments.1",
      "transforms.subtitles.1.mode",
      "transforms.subtitles.0.mode",
      "transforms.audioTracks.1.streamIndex",
      "transforms.watermark",
    ]);
  });

  it.each<[string, unknown]>([
    ["a plan that is undefined", undefined],
    ["a plan that is null", null],
    ["a plan that is a number", 42],
    ["a plan that is NaN", Number.NaN],
    ["a plan that is a string", "s3://media-in/movies/42/source.mov"],
    ["a plan that is a boolean", true],
    ["a plan that is an empty array", []],
    ["a plan that is an array of plans", [plan(), plan()]],
    ["outputs that are a string", { outputs: "720p" }],
    ["outputs holding null, numbers, strings and arrays", { outputs: [null, 1, "x", [output()]] }],
    [
      "outputs with fields of the wrong type",
      {
        outputs: [
          { id: 7, container: 5, destinationUri: {}, video: "h264", audio: { codec: 7, bitrateKbps: "320" } },
        ],
      },
    ],
    [
      "outputs whose container is a prototype property name",
      {
        outputs: ["__proto__", "constructor", "toString", "hasOwnProperty"].map((container, index) =>
          output({ id: `o${index}`, destinationUri: `s3://media-out/${index}.mp4`, container }),
        ),
        transforms: { subtitles: [subtitle("SOFT")] },
      },
    ],
    [
      "audio codecs that are prototype property names",
      {
        outputs: ["__proto__", "constructor", "valueOf"].map((codec, index) =>
          output({
            id: `o${index}`,
            destinationUri: `s3://media-out/${index}.mp4`,
            audio: { codec, bitrateKbps: 600 },
          }),
        ),
      },
    ],
    [
      "transforms that are an array",
      { outputs: [output()], transforms: [segments([0, 2000], [1000, 3000])] },
    ],
    [
      "transform lists of the wrong shape",
      {
        outputs: [output()],
        transforms: {
          removedSegments: [
            null,
            5,
            { startMs: "0", endMs: 5 },
            { startMs: 1.5, endMs: 0.5 },
            { startMs: 0 },
          ],
          subtitles: "BURN_IN",
          audioTracks: [null, { streamIndex: "1" }, { streamIndex: 1.5 }, { streamIndex: 1.5 }],
        },
      },
    ],
    ["an input and manifest of the wrong type", { input: INPUT, outputs: [output()], manifestUri: 5 }],
  ])("%s: no issue and no exception", (_name, garbage) => {
    expect(planRuleIssues(garbage)).toEqual([]);
  });

  it("the well-typed parts of a partly malformed plan are still checked", () => {
    const partlyMalformed = {
      input: { uri: 42 },
      outputs: [
        output({ container: 5 }),
        null,
        output({ video: "h264", audio: { codec: "mp3", bitrateKbps: 400 } }),
      ],
      transforms: {
        removedSegments: [
          { startMs: "0", endMs: 1 },
          { startMs: 10, endMs: 5 },
        ],
        subtitles: 3,
      },
    };
    expect(planRuleIssues(partlyMalformed)).toEqual([
      { path: ["outputs", 2, "id"], message: "duplicate output id '720p' (also outputs.0.id)" },
      {
        path: ["outputs", 2, "destinationUri"],
        message: "two outputs write to the same location (also outputs.0.destinationUri)",
      },
      { path: ["outputs", 2, "audio", "bitrateKbps"], message: "mp3 allows at most 320 kb/s" },
      { path: ["transforms", "removedSegments", 1, "endMs"], message: "endMs must be greater than startMs" },
    ]);
  });
});
