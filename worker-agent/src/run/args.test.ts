import type { Container, ExecutionPlan, PlanOutput, PlanTransforms } from "@tjm/protocol";
import { VIDEO_ENCODERS, WORKER_POOLS } from "@tjm/protocol";
import { describe, expect, it } from "vitest";
import { buildFfmpegCommand, type FfmpegCommandRequest, probeFactsNeeded, scaledWidth } from "./args.ts";
import type { MediaInfo } from "./media-info.ts";
import { missingStreamError, PlanNotApplicableError } from "./plan-errors.ts";

const HEAD = ["-hide_banner", "-nostdin", "-nostats", "-progress", "pipe:1", "-y"];
const INPUT = "/work/job/input.mov";

/** 10 s of 1080p with an English stereo track and a French 5.1 track. */
const INFO: MediaInfo = {
  formatName: "mov,mp4,m4a,3gp,3g2,mj2",
  durationMs: 10_000,
  video: { codec: "h264", width: 1920, height: 1080 },
  audioStreams: [
    { codec: "aac", channels: 2, language: "eng" },
    { codec: "ac3", channels: 6, language: "fra" },
  ],
  subtitleStreams: [],
};

function output(id: string, fields: Partial<PlanOutput> = {}): PlanOutput {
  return {
    id,
    kind: "FILE",
    container: "mp4",
    destinationUri: `s3://media-out/${id}`,
    video: { codec: "h264", height: 720, preset: "medium" },
    audio: { codec: "aac", bitrateKbps: 128 },
    ...fields,
  };
}

function plan(outputs: PlanOutput[], transforms: Partial<PlanTransforms> = {}): ExecutionPlan {
  return {
    input: { uri: "s3://media-in/input.mov" },
    outputs,
    transforms: { removedSegments: [], subtitles: [], audioTracks: [], ...transforms },
  };
}

function build(executionPlan: ExecutionPlan, overrides: Partial<FfmpegCommandRequest> = {}) {
  return buildFfmpegCommand({
    plan: executionPlan,
    pool: "cpu",
    input: { path: INPUT, info: INFO },
    subtitlePaths: [],
    outputPaths: Object.fromEntries(executionPlan.outputs.map((o) => [o.id, `/work/job/out/${o.id}`])),
    ...overrides,
  });
}

/** The -filter_complex value split into its chains, for readable expectations. */
function graphOf(args: string[]): string[] {
  const index = args.indexOf("-filter_complex");
  return index < 0 ? [] : (args[index + 1] ?? "").split(";");
}

/** One output's arguments: from just after the previous output's path up to its own path. */
function outputArgs(args: string[], path: string): string[] {
  const end = args.indexOf(path);
  const start = args.findLastIndex(
    (arg, index) => index < end && (arg.startsWith("/work/job/out/") || arg === "-filter_complex"),
  );
  return args.slice(start + (args[start] === "-filter_complex" ? 2 : 1), end + 1);
}

describe("one output", () => {
  it("an mp4 with H.264 at 720p and AAC: scale, encoder, audio bitrate, muxer, progress on stdout", () => {
    const command = build(plan([output("720p")]));
    expect(command).toEqual({
      args: [
        ...HEAD,
        ...["-i", INPUT],
        ...["-filter_complex", "[0:V:0]scale=-2:720,format=yuv420p[vout0]"],
        ...["-map", "[vout0]", "-c:v", "libx264", "-preset", "medium", "-crf", "23"],
        ...["-map", "0:a:0", "-c:a", "aac", "-b:a", "128k", "-map_metadata:s:a:0", "0:s:a:0"],
        ...["-f", "mp4", "-movflags", "+faststart", "/work/job/out/720p"],
      ],
      expectedDurationMs: 10_000,
    });
  });

  it("an omitted height keeps the input's size", () => {
    const command = build(plan([output("same", { video: { codec: "h264", preset: "fast" } })]));
    expect(graphOf(command.args)).toEqual(["[0:V:0]format=yuv420p[vout0]"]);
  });

  it("an audio-only output maps the input stream without any filter graph", () => {
    const command = build(
      plan([output("music", { video: undefined, audio: { codec: "mp3", bitrateKbps: 192 } })]),
    );
    expect(command.args).toEqual([
      ...HEAD,
      ...["-i", INPUT],
      ...["-map", "0:a:0", "-c:a", "libmp3lame", "-b:a", "192k", "-map_metadata:s:a:0", "0:s:a:0"],
      ...["-f", "mp4", "-movflags", "+faststart", "/work/job/out/music"],
    ]);
  });

  it("a video-only output maps no audio, and needs no audio in the input", () => {
    const silent: MediaInfo = { ...INFO, audioStreams: [] };
    const command = build(plan([output("mute", { audio: undefined, container: "mkv" })]), {
      input: { path: INPUT, info: silent },
    });
    expect(command.args).toEqual([
      ...HEAD,
      ...["-i", INPUT],
      ...["-filter_complex", "[0:V:0]scale=-2:720,format=yuv420p[vout0]"],
      ...["-map", "[vout0]", "-c:v", "libx264", "-preset", "medium", "-crf", "23"],
      ...["-f", "matroska", "/work/job/out/mute"],
    ]);
  });

  it("the video stream is the first that is not cover art (0:V:0), an http(s) input is passed as is", () => {
    const url = "https://store.example/input.mp4?X-Amz-Signature=abc";
    const command = build(plan([output("a")]), { input: { path: url } });
    expect(command.args.slice(6, 10)).toEqual([
      "-i",
      url,
      "-filter_complex",
      "[0:V:0]scale=-2:720,format=yuv420p[vout0]",
    ]);
  });
});

describe("container -> muxer", () => {
  const cases: [Container, PlanOutput["video"], PlanOutput["audio"], string[]][] = [
    [
      "mp4",
      { codec: "h264", preset: "medium" },
      { codec: "aac", bitrateKbps: 128 },
      ["-f", "mp4", "-movflags", "+faststart"],
    ],
    [
      "mov",
      { codec: "h264", preset: "medium" },
      { codec: "aac", bitrateKbps: 128 },
      ["-f", "mov", "-movflags", "+faststart"],
    ],
    ["mkv", { codec: "av1", preset: "medium" }, { codec: "opus", bitrateKbps: 128 }, ["-f", "matroska"]],
    ["webm", { codec: "vp9", preset: "medium" }, { codec: "opus", bitrateKbps: 128 }, ["-f", "webm"]],
    ["mpegts", { codec: "h264", preset: "medium" }, { codec: "mp3", bitrateKbps: 128 }, ["-f", "mpegts"]],
  ];
  it.each(cases)("%s ends its output with %j", (container, video, audio, muxer) => {
    const args = build(plan([output("out", { container, video, audio })])).args;
    expect(args.slice(-muxer.length - 1)).toEqual([...muxer, "/work/job/out/out"]);
    expect(args.filter((arg) => arg === "-f")).toHaveLength(1);
  });

  it("a fragmented mp4 gets a fragment per keyframe interval of at least a second, and no faststart", () => {
    const fragmented = output("out", {
      container: "mp4",
      fragmented: true,
      video: { codec: "h264", preset: "medium" },
    });
    const args = build(plan([fragmented])).args;
    expect(args.slice(-7)).toEqual([
      ...["-f", "mp4", "-movflags", "+frag_keyframe+empty_moov+default_base_moof"],
      ...["-min_frag_duration", "1000000", "/work/job/out/out"],
    ]);
  });
});

describe("video codec -> the pool's encoder", () => {
  const cases = WORKER_POOLS.flatMap((pool) =>
    (["h264", "hevc", "av1", "vp9"] as const).map(
      (codec) => [pool, codec, VIDEO_ENCODERS[pool][codec]] as const,
    ),
  );
  it.each(cases)("%s %s -> %s", (pool, codec, encoder) => {
    const args = build(plan([output("out", { container: "mkv", video: { codec, preset: "medium" } })]), {
      pool,
    }).args;
    expect(args[args.indexOf("-c:v") + 1]).toBe(encoder);
  });

  it("nvidia H.264: NVENC preset and constant-quality VBR", () => {
    const args = build(plan([output("out", { video: { codec: "h264", preset: "slowest" } })]), {
      pool: "nvidia",
    }).args;
    expect(args.slice(args.indexOf("-c:v"), args.indexOf("-c:v") + 10)).toEqual([
      "-c:v",
      "h264_nvenc",
      "-preset",
      "p7",
      "-rc",
      "vbr",
      "-cq",
      "23",
      "-b:v",
      "0",
    ]);
  });

  it("intel encoders get nv12 frames, every other family yuv420p", () => {
    const intel = build(plan([output("out", { video: { codec: "hevc", preset: "fast" } })]), {
      pool: "intel",
    }).args;
    expect(graphOf(intel)).toEqual(["[0:V:0]format=nv12[vout0]"]);
    expect(intel.slice(intel.indexOf("-c:v"), intel.indexOf("-c:v") + 6)).toEqual([
      "-c:v",
      "hevc_qsv",
      "-preset",
      "faster",
      "-global_quality",
      "23",
    ]);
  });

  it("HEVC in mp4 and mov is tagged hvc1 for Apple players; in mkv it is not", () => {
    for (const container of ["mp4", "mov"] as const) {
      const args = build(
        plan([output("out", { container, video: { codec: "hevc", preset: "fastest" } })]),
      ).args;
      expect(args.slice(args.indexOf("-c:v"), args.indexOf("-map", args.indexOf("-c:v")))).toEqual([
        "-c:v",
        "libx265",
        "-preset",
        "ultrafast",
        "-crf",
        "28",
        "-tag:v",
        "hvc1",
      ]);
    }
    const mkv = build(
      plan([output("out", { container: "mkv", video: { codec: "hevc", preset: "fastest" } })]),
    ).args;
    expect(mkv).not.toContain("-tag:v");
  });

  it("vp9 on the cpu pool: realtime deadline for 'fastest', quality mode with row-mt", () => {
    const args = build(
      plan([
        output("web", {
          container: "webm",
          video: { codec: "vp9", preset: "fastest" },
          audio: { codec: "opus", bitrateKbps: 96 },
        }),
      ]),
    ).args;
    expect(args).toEqual([
      ...HEAD,
      ...["-i", INPUT],
      "-filter_complex",
      "[0:V:0]format=yuv420p[vout0];[0:a:0]aformat=channel_layouts=mono|stereo|5.1|7.1[a0out0]",
      ...["-map", "[vout0]", "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"],
      ...["-crf", "32", "-b:v", "0", "-row-mt", "1"],
      ...["-map", "[a0out0]", "-c:a", "libopus", "-b:a", "96k", "-map_metadata:s:a:0", "0:s:a:0"],
      ...["-f", "webm", "/work/job/out/web"],
    ]);
  });
});

describe("several outputs from one decode", () => {
  it("video is split and audio asplit, each output scales and encodes its own branch", () => {
    const command = build(
      plan([
        output("1080p", { video: { codec: "h264", preset: "slow" } }),
        output("360p", {
          video: { codec: "h264", height: 360, preset: "fast" },
          audio: { codec: "aac", bitrateKbps: 64 },
        }),
        output("audio", { container: "mkv", video: undefined, audio: { codec: "opus", bitrateKbps: 96 } }),
      ]),
    );
    expect(command.args).toEqual([
      ...HEAD,
      ...["-i", INPUT],
      "-filter_complex",
      [
        "[0:V:0]split=2[vfan0][vfan1]",
        "[0:a:0]asplit=3[a0fan0][a0fan1][a0fan2]",
        "[vfan0]format=yuv420p[vout0]",
        "[vfan1]scale=-2:360,format=yuv420p[vout1]",
        "[a0fan2]aformat=channel_layouts=mono|stereo|5.1|7.1[a0out2]",
      ].join(";"),
      ...["-map", "[vout0]", "-c:v", "libx264", "-preset", "slow", "-crf", "23"],
      ...["-map", "[a0fan0]", "-c:a", "aac", "-b:a", "128k", "-map_metadata:s:a:0", "0:s:a:0"],
      ...["-f", "mp4", "-movflags", "+faststart", "/work/job/out/1080p"],
      ...["-map", "[vout1]", "-c:v", "libx264", "-preset", "veryfast", "-crf", "23"],
      ...["-map", "[a0fan1]", "-c:a", "aac", "-b:a", "64k", "-map_metadata:s:a:0", "0:s:a:0"],
      ...["-f", "mp4", "-movflags", "+faststart", "/work/job/out/360p"],
      ...["-map", "[a0out2]", "-c:a", "libopus", "-b:a", "96k", "-map_metadata:s:a:0", "0:s:a:0"],
      ...["-f", "matroska", "/work/job/out/audio"],
    ]);
  });
});

describe("removed segments", () => {
  it("each kept span is trimmed and the spans concatenated, audio and video together", () => {
    const command = build(
      plan([output("cut")], {
        removedSegments: [
          { startMs: 6_000, endMs: 7_250 },
          { startMs: 1_000, endMs: 2_500 },
        ],
      }),
    );
    expect(graphOf(command.args)).toEqual([
      "[0:V:0]split=3[vcut0][vcut1][vcut2]",
      "[vcut0]trim=end=1[vpart0]",
      "[vcut1]trim=start=2.5:end=6,setpts=PTS-2.5/TB[vpart1]",
      "[vcut2]trim=start=7.25,setpts=PTS-7.25/TB[vpart2]",
      "[0:a:0]asplit=3[a0cut0][a0cut1][a0cut2]",
      "[a0cut0]atrim=end=1[a0part0]",
      "[a0cut1]atrim=start=2.5:end=6,asetpts=PTS-2.5/TB[a0part1]",
      "[a0cut2]atrim=start=7.25,asetpts=PTS-7.25/TB[a0part2]",
      "[vpart0][a0part0][vpart1][a0part1][vpart2][a0part2]concat=n=3:v=1:a=1[vkept][a0kept]",
      "[vkept]scale=-2:720,format=yuv420p[vout0]",
    ]);
    expect(command.args.slice(command.args.indexOf("[vout0]") - 1)).toEqual([
      ...["-map", "[vout0]", "-c:v", "libx264", "-preset", "medium", "-crf", "23"],
      ...["-map", "[a0kept]", "-c:a", "aac", "-b:a", "128k", "-map_metadata:s:a:0", "0:s:a:0"],
      ...["-map_chapters", "-1"],
      ...["-f", "mp4", "-movflags", "+faststart", "/work/job/out/cut"],
    ]);
    expect(command.expectedDurationMs).toBe(10_000 - 1_500 - 1_250);
  });

  it("one kept span needs no concat: trimming the head and the tail", () => {
    const command = build(
      plan([output("middle")], {
        removedSegments: [
          { startMs: 0, endMs: 2_000 },
          { startMs: 8_000, endMs: 10_000 },
        ],
      }),
    );
    expect(graphOf(command.args)).toEqual([
      "[0:V:0]trim=start=2:end=8,setpts=PTS-2/TB[vkept]",
      "[0:a:0]atrim=start=2:end=8,asetpts=PTS-2/TB[a0kept]",
      "[vkept]scale=-2:720,format=yuv420p[vout0]",
    ]);
    expect(command.expectedDurationMs).toBe(6_000);
  });

  it("a segment past the input's end removes nothing and one across it removes up to the end", () => {
    const past = build(plan([output("a")], { removedSegments: [{ startMs: 12_000, endMs: 13_000 }] }));
    expect(past.expectedDurationMs).toBe(10_000);
    expect(past.args).not.toContain("-map_chapters");
    expect(graphOf(past.args)).toEqual(["[0:V:0]scale=-2:720,format=yuv420p[vout0]"]);

    const across = build(plan([output("a")], { removedSegments: [{ startMs: 9_000, endMs: 60_000 }] }));
    expect(across.expectedDurationMs).toBe(9_000);
    expect(graphOf(across.args)[0]).toBe("[0:V:0]trim=end=9[vkept]");
  });

  it("with several outputs and audio tracks the cut happens once, before the fan-out", () => {
    const command = build(
      plan(
        [
          output("hd", { video: { codec: "h264", preset: "fast" } }),
          output("sd", { video: { codec: "h264", height: 480, preset: "fast" } }),
          output("audio", { video: undefined, audio: { codec: "aac", bitrateKbps: 96 } }),
        ],
        {
          removedSegments: [{ startMs: 4_000, endMs: 5_000 }],
          audioTracks: [{ streamIndex: 1, language: "fr" }, { streamIndex: 0 }],
        },
      ),
    );
    expect(graphOf(command.args)).toEqual([
      "[0:V:0]split=2[vcut0][vcut1]",
      "[vcut0]trim=end=4[vpart0]",
      "[vcut1]trim=start=5,setpts=PTS-5/TB[vpart1]",
      "[0:a:1]asplit=2[a0cut0][a0cut1]",
      "[a0cut0]atrim=end=4[a0part0]",
      "[a0cut1]atrim=start=5,asetpts=PTS-5/TB[a0part1]",
      "[0:a:0]asplit=2[a1cut0][a1cut1]",
      "[a1cut0]atrim=end=4[a1part0]",
      "[a1cut1]atrim=start=5,asetpts=PTS-5/TB[a1part1]",
      "[vpart0][a0part0][a1part0][vpart1][a0part1][a1part1]concat=n=2:v=1:a=2[vkept][a0kept][a1kept]",
      "[vkept]split=2[vfan0][vfan1]",
      "[a0kept]asplit=3[a0fan0][a0fan1][a0fan2]",
      "[a1kept]asplit=3[a1fan0][a1fan1][a1fan2]",
      "[vfan0]format=yuv420p[vout0]",
      "[vfan1]scale=-2:480,format=yuv420p[vout1]",
    ]);
    const audioOnly = command.args.slice(command.args.lastIndexOf("[vout1]") + 8);
    expect(audioOnly.slice(audioOnly.indexOf("[a0fan2]") - 1)).toEqual([
      ...["-map", "[a0fan2]", "-map", "[a1fan2]", "-c:a", "aac", "-b:a", "96k"],
      ...["-map_metadata:s:a:0", "0:s:a:1", "-metadata:s:a:0", "language=fra"],
      ...["-map_metadata:s:a:1", "0:s:a:0"],
      ...["-map_chapters", "-1", "-f", "mp4", "-movflags", "+faststart", "/work/job/out/audio"],
    ]);
    expect(command.expectedDurationMs).toBe(9_000);
  });

  it("an audio-only plan cuts audio alone (concat with v=0)", () => {
    const command = build(
      plan([output("a", { video: undefined })], { removedSegments: [{ startMs: 1_000, endMs: 2_000 }] }),
    );
    expect(graphOf(command.args)).toEqual([
      "[0:a:0]asplit=2[a0cut0][a0cut1]",
      "[a0cut0]atrim=end=1[a0part0]",
      "[a0cut1]atrim=start=2,asetpts=PTS-2/TB[a0part1]",
      "[a0part0][a0part1]concat=n=2:v=0:a=1[a0kept]",
    ]);
  });
});

describe("subtitles", () => {
  it("BURN_IN draws the file onto the input's timeline, before the cut and the fan-out", () => {
    const command = build(
      plan([output("a"), output("b", { video: { codec: "h264", height: 360, preset: "fast" } })], {
        subtitles: [{ uri: "s3://media-in/en.srt", language: "en", mode: "BURN_IN" }],
        removedSegments: [{ startMs: 0, endMs: 1_000 }],
      }),
      { subtitlePaths: ["/work/job/subtitles/0.srt"] },
    );
    expect(graphOf(command.args).slice(0, 3)).toEqual([
      "[0:V:0]subtitles=filename=/work/job/subtitles/0.srt[burned]",
      "[burned]trim=start=1,setpts=PTS-1/TB[vkept]",
      "[0:a:0]atrim=start=1,asetpts=PTS-1/TB[a0kept]",
    ]);
    expect(command.args.filter((arg) => arg === "-i")).toHaveLength(1);
  });

  it("a burned-in path is escaped twice: for the subtitles filter's option and for the graph", () => {
    const path = "/work/job/it's: [a], b; c\\d e.srt";
    const command = build(
      plan([output("a")], { subtitles: [{ uri: "s3://media-in/x.srt", language: "en", mode: "BURN_IN" }] }),
      { subtitlePaths: [path] },
    );
    // Level 1 ' : , ; [ ] \ and space -> \x; level 2 the same again, so each becomes \\\x.
    expect(command.args[command.args.indexOf("-filter_complex") + 1]?.split("[burned]")[0]).toBe(
      "[0:V:0]subtitles=filename=/work/job/it\\\\\\'s\\\\\\:\\\\\\ \\\\\\[a\\\\\\]\\\\\\,\\\\\\ b\\\\\\;\\\\\\ c\\\\\\\\d\\\\\\ e.srt",
    );
  });

  it("SOFT files are extra inputs muxed into every video output with the container's text codec", () => {
    const command = build(
      plan(
        [
          output("mp4"),
          output("mkv", { container: "mkv" }),
          output("web", { container: "webm", video: { codec: "vp9", preset: "fast" }, audio: undefined }),
          output("audio", { video: undefined }),
        ],
        {
          subtitles: [
            { uri: "s3://media-in/en.srt", language: "en", mode: "SOFT" },
            { uri: "s3://media-in/pt.ass", language: "pt-BR", mode: "SOFT" },
          ],
        },
      ),
      { subtitlePaths: ["/work/job/subtitles/0.srt", "/work/job/subtitles/1.ass"] },
    );
    const args = command.args;
    expect(args.slice(6, 12)).toEqual([
      "-i",
      INPUT,
      "-i",
      "/work/job/subtitles/0.srt",
      "-i",
      "/work/job/subtitles/1.ass",
    ]);
    const soft = (first: string, second: string) => [
      ...["-map", "1:s:0", "-c:s:0", first, "-metadata:s:s:0", "language=eng"],
      ...["-map", "2:s:0", "-c:s:1", second, "-metadata:s:s:1", "language=por"],
    ];
    expect(outputArgs(args, "/work/job/out/mp4").slice(16)).toEqual([
      ...soft("mov_text", "mov_text"),
      ...["-f", "mp4", "-movflags", "+faststart", "/work/job/out/mp4"],
    ]);
    expect(outputArgs(args, "/work/job/out/mkv").slice(16)).toEqual([
      ...soft("srt", "ass"),
      ...["-default_mode", "infer_no_subs", "-f", "matroska", "/work/job/out/mkv"],
    ]);
    expect(outputArgs(args, "/work/job/out/web").slice(14)).toEqual([
      ...soft("webvtt", "webvtt"),
      ...["-default_mode", "infer_no_subs", "-f", "webm", "/work/job/out/web"],
    ]);
    expect(outputArgs(args, "/work/job/out/audio")).not.toContain("1:s:0");
  });

  it("a burned-in and a soft subtitle together: only the soft one becomes an input", () => {
    const command = build(
      plan([output("a", { container: "mov" })], {
        subtitles: [
          { uri: "s3://media-in/burn.srt", language: "en", mode: "BURN_IN" },
          { uri: "s3://media-in/soft.srt", language: "de", mode: "SOFT" },
        ],
      }),
      { subtitlePaths: ["/work/job/subtitles/0.srt", "/work/job/subtitles/1.srt"] },
    );
    expect(command.args.slice(6, 10)).toEqual(["-i", INPUT, "-i", "/work/job/subtitles/1.srt"]);
    expect(command.args).toContain("language=deu");
  });

  it("soft subtitles in mpegts are refused: the Manager should not have accepted the plan", () => {
    const executionPlan = plan([output("ts", { container: "mpegts" })], {
      subtitles: [{ uri: "s3://media-in/en.srt", language: "en", mode: "SOFT" }],
    });
    expect(() => build(executionPlan, { subtitlePaths: ["/work/job/subtitles/0.srt"] })).toThrow(
      expect.objectContaining({ name: "PlanNotApplicableError", failureCode: "PLAN_UNSUPPORTED" }),
    );
  });
});

describe("audio tracks", () => {
  it("without audioTracks the first input audio stream is used, keeping its tags (its language)", () => {
    const args = build(plan([output("a", { video: undefined })]), { input: { path: INPUT } }).args;
    expect(args.slice(8, 16)).toEqual([
      "-map",
      "0:a:0",
      "-c:a",
      "aac",
      "-b:a",
      "128k",
      "-map_metadata:s:a:0",
      "0:s:a:0",
    ]);
  });

  it("selected tracks become output streams in plan order, the plan's language winning", () => {
    const unlabelled: MediaInfo = {
      ...INFO,
      audioStreams: [
        { codec: "aac", channels: 2 },
        { codec: "aac", channels: 2 },
      ],
    };
    const args = build(
      plan([output("a", { video: undefined })], {
        audioTracks: [{ streamIndex: 1, language: "pt-BR" }, { streamIndex: 0 }],
      }),
      { input: { path: INPUT, info: unlabelled } },
    ).args;
    expect(args.slice(8)).toEqual([
      ...["-map", "0:a:1", "-map", "0:a:0", "-c:a", "aac", "-b:a", "128k"],
      ...["-map_metadata:s:a:0", "0:s:a:1", "-metadata:s:a:0", "language=por"],
      ...["-map_metadata:s:a:1", "0:s:a:0"],
      ...["-f", "mp4", "-movflags", "+faststart", "/work/job/out/a"],
    ]);
  });
});

describe("opus", () => {
  it("goes through aformat, as ffmpeg 5.1's libopus refuses 5.1(side) instead of converting it", () => {
    const args = build(
      plan([output("a", { container: "mkv", video: undefined, audio: { codec: "opus", bitrateKbps: 128 } })]),
    ).args;
    expect(graphOf(args)).toEqual(["[0:a:0]aformat=channel_layouts=mono|stereo|5.1|7.1[a0out0]"]);
  });

  it("is capped at 256 kb/s per channel for each track that would exceed it", () => {
    const info: MediaInfo = {
      ...INFO,
      audioStreams: [
        { codec: "aac", channels: 1 },
        { codec: "ac3", channels: 6 },
      ],
    };
    const args = build(
      plan(
        [output("a", { container: "webm", video: undefined, audio: { codec: "opus", bitrateKbps: 510 } })],
        {
          audioTracks: [{ streamIndex: 0 }, { streamIndex: 1 }],
        },
      ),
      { input: { path: INPUT, info } },
    ).args;
    expect(args.slice(args.indexOf("-c:a"), args.indexOf("-f"))).toEqual([
      "-c:a",
      "libopus",
      "-b:a",
      "510k",
      "-b:a:0",
      "256k",
      ...["-map_metadata:s:a:0", "0:s:a:0", "-map_metadata:s:a:1", "0:s:a:1"],
    ]);
  });
});

describe("watermark", () => {
  const watermark = { uri: "s3://media-in/logo.png", marginPx: 16, opacity: 1 } as const;
  const positions = [
    ["top-left", "x=16:y=16"],
    ["top-right", "x=W-w-16:y=16"],
    ["bottom-left", "x=16:y=H-h-16"],
    ["bottom-right", "x=W-w-16:y=H-h-16"],
    ["center", "x=(W-w)/2:y=(H-h)/2"],
  ] as const;
  it.each(positions)("%s -> overlay %s", (position, expression) => {
    const command = build(
      plan([output("a", { video: { codec: "h264", preset: "fast" } })], {
        watermark: { ...watermark, position },
      }),
      {
        watermarkPath: "/work/job/logo.png",
      },
    );
    expect(command.args.slice(6, 10)).toEqual(["-i", INPUT, "-i", "/work/job/logo.png"]);
    expect(graphOf(command.args)).toEqual([`[0:V:0][1:v]overlay=${expression},format=yuv420p[vout0]`]);
  });

  it("opacity and widthPercent apply per output, in that output's pixels", () => {
    const command = build(
      plan([output("720p"), output("360p", { video: { codec: "h264", height: 360, preset: "fast" } })], {
        watermark: { ...watermark, position: "bottom-right", opacity: 0.5, widthPercent: 10 },
      }),
      { watermarkPath: "/work/job/logo.png" },
    );
    expect(graphOf(command.args)).toEqual([
      "[1:v]format=rgba,colorchannelmixer=aa=0.5,split=2[wm0][wm1]",
      "[0:V:0]split=2[vfan0][vfan1]",
      "[0:a:0]asplit=2[a0fan0][a0fan1]",
      "[vfan0]scale=-2:720[vscaled0]",
      "[wm0]scale=128:-1[wmscaled0]",
      "[vscaled0][wmscaled0]overlay=x=W-w-16:y=H-h-16,format=yuv420p[vout0]",
      "[vfan1]scale=-2:360[vscaled1]",
      "[wm1]scale=64:-1[wmscaled1]",
      "[vscaled1][wmscaled1]overlay=x=W-w-16:y=H-h-16,format=yuv420p[vout1]",
    ]);
  });

  it("audio-only outputs get no watermark and a plan with only those takes no watermark input", () => {
    const command = build(
      plan([output("a", { video: undefined })], { watermark: { ...watermark, position: "center" } }),
      { watermarkPath: "/work/job/logo.png" },
    );
    expect(command.args).not.toContain("/work/job/logo.png");
  });
});

describe("scaledWidth (what scale=-2:H gives)", () => {
  it.each([
    [1920, 1080, 720, 1280],
    [1920, 1080, 360, 640],
    [1920, 1080, 144, 256],
    [320, 240, 180, 240],
    [1440, 1080, 480, 640],
    [1000, 750, 146, 194], // 194.67 -> 97.33 pairs -> 97 pairs
    [720, 576, 144, 180],
  ])("%ix%i at height %i -> width %i", (width, height, target, expected) => {
    expect(scaledWidth({ codec: "h264", width, height }, target)).toBe(expected);
  });
});

describe("what the builder refuses", () => {
  const expectRefusal = (fn: () => unknown, message: RegExp, failureCode: string) => {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(PlanNotApplicableError);
      expect((error as PlanNotApplicableError).failureCode).toBe(failureCode);
      expect((error as Error).message).toMatch(message);
      return;
    }
    throw new Error("expected a refusal");
  };

  it("audio asked of an input without audio", () => {
    expectRefusal(
      () => build(plan([output("a")]), { input: { path: INPUT, info: { ...INFO, audioStreams: [] } } }),
      /asks for audio but the input has none/,
      "INPUT_INCOMPATIBLE",
    );
  });

  it("video asked of an audio-only input", () => {
    const { video: _, ...audioOnly } = INFO;
    expectRefusal(
      () => build(plan([output("a")]), { input: { path: INPUT, info: audioOnly } }),
      /asks for video but the input has none/,
      "INPUT_INCOMPATIBLE",
    );
  });

  it("an audio stream the input does not have", () => {
    expectRefusal(
      () => build(plan([output("a")], { audioTracks: [{ streamIndex: 2 }] })),
      /audio stream 2 is selected but the input has 2 audio streams/,
      "INPUT_INCOMPATIBLE",
    );
  });

  it("removed segments covering the whole input", () => {
    expectRefusal(
      () => build(plan([output("a")], { removedSegments: [{ startMs: 0, endMs: 10_000 }] })),
      /cover the whole input/,
      "INPUT_INCOMPATIBLE",
    );
  });

  it("relative or option-like paths, and missing ones, are programming errors", () => {
    expect(() => build(plan([output("a")]), { input: { path: "-i.mp4", info: INFO } })).toThrow(
      /absolute path/,
    );
    expect(() => build(plan([output("a")]), { outputPaths: { a: "out.mp4" } })).toThrow(
      /not an absolute path/,
    );
    expect(() => build(plan([output("a")]), { outputPaths: {} })).toThrow(/no local path for output a/);
    expect(() =>
      build(plan([output("a")], { subtitles: [{ uri: "s3://m/s.srt", language: "en", mode: "SOFT" }] })),
    ).toThrow(/no local file for transforms.subtitles.0/);
    expect(() =>
      build(
        plan([output("a")], {
          watermark: { uri: "s3://m/l.png", position: "center", marginPx: 0, opacity: 1 },
        }),
      ),
    ).toThrow(/no watermarkPath/);
  });
});

describe("without the input's probe", () => {
  it("most plans need none: the same command, the expected duration left to ffmpeg's own output", () => {
    const executionPlan = plan([output("a"), output("b", { video: undefined })]);
    expect(probeFactsNeeded(executionPlan)).toBeUndefined();
    const unprobed = build(executionPlan, { input: { path: INPUT } });
    expect(unprobed.args).toEqual(build(executionPlan).args);
    expect(unprobed.expectedDurationMs).toBeUndefined();
  });

  it("removed segments, a watermark sized by widthPercent and opus above 256 kb/s wait for it", () => {
    const watermark = { uri: "s3://media-in/logo.png", marginPx: 0, opacity: 1, position: "center" } as const;
    const needing = [
      plan([output("a")], { removedSegments: [{ startMs: 0, endMs: 1_000 }] }),
      plan([output("a")], { watermark: { ...watermark, widthPercent: 10 } }),
      plan([output("a", { audio: { codec: "opus", bitrateKbps: 320 } })]),
    ];
    for (const executionPlan of needing) {
      expect(probeFactsNeeded(executionPlan)).toBeDefined();
      expect(() =>
        build(executionPlan, { input: { path: INPUT }, watermarkPath: "/work/job/watermark" }),
      ).toThrow("the input's probe is needed");
    }
    expect(probeFactsNeeded(plan([output("a")], { watermark }))).toBeUndefined();
    expect(
      probeFactsNeeded(plan([output("a", { audio: { codec: "opus", bitrateKbps: 256 } })])),
    ).toBeUndefined();
  });

  it("ffmpeg's 'matches no streams' for the input's video or audio is INPUT_INCOMPATIBLE; a side file's is not", () => {
    const map = missingStreamError(
      "Stream map '0:a:1' matches no streams.\nTo ignore this, add a trailing '?' to the map.\n",
    );
    expect(map).toBeInstanceOf(PlanNotApplicableError);
    expect(map?.failureCode).toBe("INPUT_INCOMPATIBLE");
    expect(map?.message).toContain("audio stream 1");
    const graph = missingStreamError(
      "Stream specifier ':V:0' in filtergraph description [0:V:0]scale=-2:720[vout0] matches no streams.",
    );
    expect(graph?.message).toContain("asks for video but the input has none");
    expect(missingStreamError("Stream map '2:s:0' matches no streams.")).toBeUndefined();
    expect(missingStreamError("Conversion failed!")).toBeUndefined();
  });
});
