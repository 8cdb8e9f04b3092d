import { describe, expect, it } from "vitest";
import { ExecutionPlanSchema, planLimits, workspacePathProblem } from "./plan.ts";

type Json = Record<string, unknown>;

/** A plan using every part, as the Manager stores it: defaults filled in, portable names only. */
const plan = {
  input: { uri: "s3://media-in/trailers/7/feature.mxf" },
  outputs: [
    {
      id: "1080p",
      kind: "FILE",
      container: "mp4",
      destinationUri: "s3://media-out/trailers/7/1080p.mp4",
      video: { codec: "h264", height: 1080, preset: "slow" },
      audio: { codec: "aac", bitrateKbps: 128 },
    },
    {
      id: "audio",
      kind: "FILE",
      container: "mkv",
      destinationUri: "s3://media-out/trailers/7/audio.mka",
      audio: { codec: "opus", bitrateKbps: 96 },
    },
  ],
  transforms: {
    removedSegments: [{ startMs: 0, endMs: 12000 }],
    subtitles: [{ uri: "s3://media-in/trailers/7/pt-BR.srt", language: "pt-BR", mode: "BURN_IN" }],
    audioTracks: [{ streamIndex: 1, language: "en" }, { streamIndex: 0 }],
    watermark: {
      uri: "s3://media-in/brand/logo.png",
      position: "top-right",
      marginPx: 16,
      opacity: 0.8,
      widthPercent: 10,
    },
  },
  workspace: { rootDirectory: "/var/lib/tjm/work" },
  manifestUri: "s3://media-out/trailers/7/manifest.json",
};

/** A copy of the plan with the value at `path` replaced (or removed, for undefined). */
function changed(path: (string | number)[], value: unknown): Json {
  const copy = structuredClone(plan) as Json;
  let target = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>;
  const last = path.at(-1) as string | number;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

const issues = (value: unknown) =>
  ExecutionPlanSchema.safeParse(value).error?.issues.map((issue) => ({
    path: issue.path.join("."),
    message: issue.message,
  })) ?? [];

describe("the execution plan", () => {
  it("a plan using every part is accepted as it is", () => {
    expect(ExecutionPlanSchema.parse(plan)).toEqual(plan);
  });

  it("fields it does not know are dropped", () => {
    const padded = changed(["outputs", 0, "thumbnail"], true);
    expect(ExecutionPlanSchema.parse({ ...padded, notes: "x" })).toEqual(plan);
  });

  it.each<[string, (string | number)[], unknown]>([
    ["an encoder name in place of a portable codec", ["outputs", 0, "video", "codec"], "libx264"],
    ["an x264 preset word", ["outputs", 0, "video", "preset"], "ultrafast"],
    ["an NVENC preset", ["outputs", 0, "video", "preset"], "p4"],
    ["a video without its preset", ["outputs", 0, "video", "preset"], undefined],
    ["an audio without its bitrate", ["outputs", 0, "audio", "bitrateKbps"], undefined],
    ["a plan without transforms", ["transforms"], undefined],
    ["transforms without removedSegments", ["transforms", "removedSegments"], undefined],
    ["transforms without subtitles", ["transforms", "subtitles"], undefined],
    ["transforms without audioTracks", ["transforms", "audioTracks"], undefined],
    ["a watermark without its position", ["transforms", "watermark", "position"], undefined],
    ["a watermark without its margin", ["transforms", "watermark", "marginPx"], undefined],
    ["a watermark without its opacity", ["transforms", "watermark", "opacity"], undefined],
  ])(
    "%s (the Manager's template accepts it, the stored plan never holds it) is refused",
    (_, path, value) => {
      expect(issues(changed(path, value)).map((issue) => issue.path)).toEqual([path.join(".")]);
    },
  );

  it(`a language tag may be ${planLimits.languageTagLength} characters long, not more`, () => {
    const longest = "abc-defghijk-lmnopqrs-tuvwxyza-bcde";
    expect(longest).toHaveLength(planLimits.languageTagLength);
    expect(issues(changed(["transforms", "subtitles", 0, "language"], longest))).toEqual([]);
    expect(issues(changed(["transforms", "audioTracks", 0, "language"], `${longest}f`))).toEqual([
      {
        path: "transforms.audioTracks.0.language",
        message: `Too big: expected string to have <=${planLimits.languageTagLength} characters`,
      },
    ]);
  });

  it("a location is checked as @tjm/storage parses it", () => {
    expect(issues(changed(["manifestUri"], "s3://Media-Out/manifest.json"))).toEqual([
      {
        path: "manifestUri",
        message: "bucket name may hold only lowercase letters, digits, dots and hyphens",
      },
    ]);
  });

  it("a work directory is checked by workspacePathProblem", () => {
    expect(issues(changed(["workspace", "rootDirectory"], "var/lib/tjm"))).toEqual([
      { path: "workspace.rootDirectory", message: "must be an absolute path" },
    ]);
  });
});

describe("workspacePathProblem", () => {
  it.each([
    ["an absolute path", "/var/lib/tjm/work"],
    ["a segment that merely contains dots", "/var/lib/tjm/work..old/.cache"],
    ["a path of exactly 4096 characters", `/${"a".repeat(4095)}`],
  ])("%s is accepted", (_name, path) => {
    expect(workspacePathProblem(path)).toBeUndefined();
  });

  it.each([
    ["a relative path", "var/lib/tjm/work", "must be an absolute path"],
    ["a dot-relative path", "./work", "must be an absolute path"],
    ["an empty path", "", "must be an absolute path"],
    ["a path with a '..' segment", "/var/lib/../../etc", "must not contain '..' segments"],
    ["a path ending in '..'", "/var/lib/tjm/..", "must not contain '..' segments"],
    ["a path with a NUL character", "/var/lib/tjm\u0000/work", "must not contain control characters"],
    [
      "a path with another control character",
      "/var/lib/tjm\u0001/work",
      "must not contain control characters",
    ],
    ["a path with a lone surrogate", "/var/lib/tjm\ud800/work", "must be well-formed Unicode"],
    ["a path longer than 4096 characters", `/${"a".repeat(4096)}`, "must be at most 4096 characters"],
  ])("%s is refused", (_name, path, problem) => {
    expect(workspacePathProblem(path)).toBe(problem);
  });
});
