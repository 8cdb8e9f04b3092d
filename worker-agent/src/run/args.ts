/**
 * Plan -> one ffmpeg invocation for every output. Pure: paths in, argument array out.
 *
 * The input is decoded once; one -filter_complex applies the shared work (burned-in
 * subtitle, removed segments) and then fans each stream out with split/asplit, so every
 * output gets its own scale, watermark and encoder without a second decode.
 *
 * Removed segments: every kept span is cut with trim (video) and atrim (audio) and the
 * spans are joined with concat. atrim cuts at the sample, and concat starts each span at the
 * end of the longest stream of the previous one (padding audio with silence if needed), so a
 * cut can misalign audio and video by at most one video frame and the error never carries
 * into the next span. The alternative, select/aselect with setpts, drops whole audio frames
 * (1024 samples, ~21 ms, for AAC) at every cut and rebuilds timestamps from frame counts,
 * which assumes constant frame rate; over many cuts the drift adds up.
 *
 * Order of the video chain: burn-in subtitle (on the input timeline, which is the one the
 * subtitle file was timed for) -> cut -> split -> per output: scale, watermark, pixel format.
 * The watermark is placed per output so that marginPx and widthPercent hold in each output's
 * own pixels.
 */

import type { Container, ExecutionPlan, PlanAudioTrack, PlanOutput, PlanWatermark } from "@tjm/protocol";
import { AUDIO_ENCODERS, VIDEO_ENCODERS, type WorkerPool } from "@tjm/protocol";
import { encoderFamily, encoderPixelFormat, videoEncoderOptions } from "./encoder-settings.ts";
import {
  fanOut,
  filterArgument,
  inputStream,
  link,
  mapTarget,
  pad,
  type StreamRef,
  seconds,
} from "./filtergraph.ts";
import { containerLanguage } from "./language-codes.ts";
import type { MediaInfo, VideoStreamInfo } from "./media-info.ts";
import { PlanNotApplicableError } from "./plan-errors.ts";
import { type KeptRange, keptDurationMs, keptRanges } from "./timeline.ts";

export interface FfmpegCommandRequest {
  plan: ExecutionPlan;
  pool: WorkerPool;
  /**
   * `path`: an absolute local path or an http(s) URL ffmpeg reads directly; `options`: input
   * options placed before its `-i` (the http protocol's reconnect settings).
   */
  input: { path: string; info: MediaInfo; options?: readonly string[] };
  /**
   * Local files in the order of plan.transforms.subtitles. A BURN_IN file is timed for the
   * input; SOFT files are muxed as they are, so with removed segments the caller passes them
   * retimed (subtitle-retime.ts).
   */
  subtitlePaths: readonly string[];
  watermarkPath?: string;
  /** Output id -> absolute local path. */
  outputPaths: Readonly<Record<string, string>>;
}

export interface FfmpegCommand {
  /** Everything after the ffmpeg executable. */
  args: string[];
  /** The length of every output: the input's duration less the removed segments. */
  expectedDurationMs: number;
}

const MUXERS: Record<Container, string[]> = {
  mp4: ["-f", "mp4", "-movflags", "+faststart"],
  mov: ["-f", "mov", "-movflags", "+faststart"],
  mkv: ["-f", "matroska"],
  webm: ["-f", "webm"],
  mpegts: ["-f", "mpegts"],
};

/**
 * Fragmented MP4: ffmpeg writes it front to back and never seeks back (byte-identical to its
 * output on a pipe), so it can be uploaded while it is written. A fragment starts at each
 * keyframe at least a second after the last, so an audio-only output gets no per-frame ones.
 */
const FRAGMENTED_MP4 = [
  ...["-f", "mp4", "-movflags", "+frag_keyframe+empty_moov+default_base_moof"],
  ...["-min_frag_duration", "1000000"],
];

function muxerOptions(output: PlanOutput): string[] {
  return output.container === "mp4" && output.fragmented ? FRAGMENTED_MP4 : MUXERS[output.container];
}

/**
 * ffmpeg 5.1's libopus accepts only the Vorbis channel orders and does not ask the filter graph
 * for them, so a "5.1(side)" track (every AC-3 or DTS 5.1 source) fails to open the encoder.
 * aformat lets the graph convert to the nearest layout libopus takes.
 */
const OPUS_LAYOUTS = "mono|stereo|5.1|7.1";
const OPUS_MAX_KBPS_PER_CHANNEL = 256;

/** Soft-subtitle codec per container; mpegts carries none (DVB/teletext subtitles are bitmaps). */
function softSubtitleCodec(container: Container, path: string): string | undefined {
  switch (container) {
    case "mp4":
    case "mov":
      return "mov_text";
    case "mkv":
      // ASS keeps its styling in Matroska; everything else text-based becomes SubRip.
      return /\.(ass|ssa)$/i.test(path) ? "ass" : "srt";
    case "webm":
      return "webvtt";
    case "mpegts":
      return undefined;
  }
}

export function buildFfmpegCommand(request: FfmpegCommandRequest): FfmpegCommand {
  const { plan, pool, input, outputPaths } = request;
  const { info } = input;
  checkLocations(request);

  const videoOutputs = plan.outputs.filter((output) => output.video !== undefined);
  const audioOutputs = plan.outputs.filter((output) => output.audio !== undefined);
  const video = videoOutputs.length > 0 ? requireVideo(info) : undefined;
  const tracks = audioOutputs.length > 0 ? audioTracks(plan, info) : [];

  const inputs = [...(input.options ?? []), "-i", input.path];
  const graph: string[] = [];

  let videoSource = video ? inputStream(`0:v:${video.streamIndex}`) : undefined;
  const burnIn = plan.transforms.subtitles.findIndex((subtitle) => subtitle.mode === "BURN_IN");
  if (videoSource && burnIn >= 0) {
    graph.push(
      `${link(videoSource)}subtitles=filename=${filterArgument(subtitlePath(request, burnIn))}[burned]`,
    );
    videoSource = pad("burned");
  }

  const ranges = keptRanges(plan.transforms.removedSegments, info.durationMs);
  const cut = !(ranges.length === 1 && ranges[0]?.startMs === 0 && ranges[0].endMs === undefined);
  let audioSources = tracks.map((track) => inputStream(`0:a:${track.streamIndex}`));
  if (cut) ({ videoSource, audioSources } = cutSegments(graph, ranges, videoSource, audioSources));

  let watermarkSources: StreamRef[] = [];
  if (video && plan.transforms.watermark) {
    if (request.watermarkPath === undefined) throw new Error("the plan has a watermark but no watermarkPath");
    inputs.push("-i", request.watermarkPath);
    watermarkSources = watermarkInputs(graph, plan.transforms.watermark, videoOutputs.length);
  }

  const softSubtitles = plan.transforms.subtitles.flatMap((subtitle, index) => {
    if (subtitle.mode !== "SOFT") return [];
    const inputIndex = (inputs.length - (input.options?.length ?? 0)) / 2;
    const path = subtitlePath(request, index);
    inputs.push("-i", path);
    return [{ spec: `${inputIndex}:s:0`, language: subtitle.language, path }];
  });

  const videoBranches = videoSource ? fanOut(graph, videoSource, videoOutputs.length, "split", "vfan") : [];
  const audioBranches = audioSources.map((source, track) =>
    fanOut(graph, source, audioOutputs.length, "asplit", `a${track}fan`),
  );

  const outputArgs = plan.outputs.flatMap((output, outputIndex) => {
    const args: string[] = [];
    const videoIndex = videoOutputs.indexOf(output);
    if (output.video && video && videoIndex >= 0) {
      const branch = videoBranches[videoIndex] as StreamRef;
      const encoder = VIDEO_ENCODERS[pool][output.video.codec];
      const label = `vout${outputIndex}`;
      graph.push(
        ...outputVideoChain(branch, label, {
          height: output.video.height,
          pixelFormat: encoderPixelFormat(encoderFamily(encoder)),
          watermark: plan.transforms.watermark,
          watermarkSource: watermarkSources[videoIndex],
          outputWidth: scaledWidth(video, output.video.height),
          outputIndex,
        }),
      );
      args.push("-map", `[${label}]`, ...videoEncoderOptions(encoder, output.video.preset));
      if (output.video.codec === "hevc" && (output.container === "mp4" || output.container === "mov")) {
        // Apple players only open HEVC in MP4/MOV when the sample entry is hvc1, not hev1.
        args.push("-tag:v", "hvc1");
      }
    }
    const audioIndex = audioOutputs.indexOf(output);
    if (output.audio && audioIndex >= 0) {
      const { codec, bitrateKbps } = output.audio;
      audioBranches.forEach((branches, track) => {
        let branch = branches[audioIndex] as StreamRef;
        if (codec === "opus") {
          branch = pad(`a${track}out${outputIndex}`);
          graph.push(
            `${link(branches[audioIndex] as StreamRef)}aformat=channel_layouts=${OPUS_LAYOUTS}${link(branch)}`,
          );
        }
        args.push("-map", mapTarget(branch));
      });
      args.push("-c:a", AUDIO_ENCODERS[codec], "-b:a", `${bitrateKbps}k`);
      tracks.forEach((track, index) => {
        // libopus refuses more than 256 kb/s per channel (a mono track at the plan's 510 fails).
        const opusMax = OPUS_MAX_KBPS_PER_CHANNEL * track.channels;
        if (codec === "opus" && track.channels > 0 && bitrateKbps > opusMax)
          args.push(`-b:a:${index}`, `${opusMax}k`);
        if (track.language)
          args.push(`-metadata:s:a:${index}`, `language=${containerLanguage(track.language)}`);
      });
    }
    const subtitles = output.video ? softSubtitles : [];
    subtitles.forEach((subtitle, index) => {
      const codec = softSubtitleCodec(output.container, subtitle.path);
      if (codec === undefined) {
        throw new PlanNotApplicableError(
          `output ${output.id}: container ${output.container} cannot carry soft subtitles`,
          "PLAN_UNSUPPORTED",
        );
      }
      args.push("-map", subtitle.spec, `-c:s:${index}`, codec);
      args.push(`-metadata:s:s:${index}`, `language=${containerLanguage(subtitle.language)}`);
    });
    // Chapters keep their input times, which no longer match once segments are removed.
    if (cut) args.push("-map_chapters", "-1");
    if (subtitles.length > 0 && (output.container === "mkv" || output.container === "webm")) {
      // Matroska would otherwise flag the first subtitle track default, and players show it.
      args.push("-default_mode", "infer_no_subs");
    }
    args.push(...muxerOptions(output), outputPath(outputPaths, output));
    return args;
  });

  return {
    args: [
      ...["-hide_banner", "-nostdin", "-nostats", "-progress", "pipe:1", "-y"],
      ...inputs,
      ...(graph.length > 0 ? ["-filter_complex", graph.join(";")] : []),
      ...outputArgs,
    ],
    expectedDurationMs: keptDurationMs(ranges, info.durationMs),
  };
}

function cutSegments(
  graph: string[],
  ranges: KeptRange[],
  videoSource: StreamRef | undefined,
  audioSources: StreamRef[],
): { videoSource: StreamRef | undefined; audioSources: StreamRef[] } {
  const trims = (range: KeptRange, audio: boolean) => {
    const bounds = [
      ...(range.startMs > 0 ? [`start=${seconds(range.startMs)}`] : []),
      ...(range.endMs !== undefined ? [`end=${seconds(range.endMs)}`] : []),
    ].join(":");
    // Subtracting the span's exact start, not its first frame's time (STARTPTS), keeps a
    // video frame that begins a little after the cut exactly that far after it.
    const shift =
      range.startMs > 0 ? `,${audio ? "asetpts" : "setpts"}=PTS-${seconds(range.startMs)}/TB` : "";
    return `${audio ? "atrim" : "trim"}=${bounds}${shift}`;
  };
  const streams = [
    ...(videoSource ? [{ source: videoSource, name: "v", audio: false }] : []),
    ...audioSources.map((source, index) => ({ source, name: `a${index}`, audio: true })),
  ];
  if (ranges.length === 1) {
    const range = ranges[0] as KeptRange;
    for (const stream of streams)
      graph.push(`${link(stream.source)}${trims(range, stream.audio)}[${stream.name}kept]`);
  } else {
    const parts = streams.map((stream) =>
      fanOut(graph, stream.source, ranges.length, stream.audio ? "asplit" : "split", `${stream.name}cut`).map(
        (branch, index) => {
          graph.push(
            `${link(branch)}${trims(ranges[index] as KeptRange, stream.audio)}[${stream.name}part${index}]`,
          );
          return `[${stream.name}part${index}]`;
        },
      ),
    );
    const concatInputs = ranges.map((_, index) => parts.map((part) => part[index]).join("")).join("");
    const concatOutputs = streams.map((stream) => `[${stream.name}kept]`).join("");
    graph.push(
      `${concatInputs}concat=n=${ranges.length}:v=${videoSource ? 1 : 0}:a=${audioSources.length}${concatOutputs}`,
    );
  }
  return {
    videoSource: videoSource ? pad("vkept") : undefined,
    audioSources: audioSources.map((_, index) => pad(`a${index}kept`)),
  };
}

/** The watermark image, made translucent once and split to every video output. */
function watermarkInputs(graph: string[], watermark: PlanWatermark, count: number): StreamRef[] {
  const filters = watermark.opacity < 1 ? [`format=rgba,colorchannelmixer=aa=${watermark.opacity}`] : [];
  if (count > 1) filters.push(`split=${count}`);
  if (filters.length === 0) return [inputStream("1:v")];
  const outputs = Array.from({ length: count }, (_, index) => pad(`wm${index}`));
  graph.push(`[1:v]${filters.join(",")}${outputs.map(link).join("")}`);
  return outputs;
}

const OVERLAY_POSITION: Record<PlanWatermark["position"], (margin: number) => string> = {
  "top-left": (m) => `x=${m}:y=${m}`,
  "top-right": (m) => `x=W-w-${m}:y=${m}`,
  "bottom-left": (m) => `x=${m}:y=H-h-${m}`,
  "bottom-right": (m) => `x=W-w-${m}:y=H-h-${m}`,
  center: () => "x=(W-w)/2:y=(H-h)/2",
};

function outputVideoChain(
  source: StreamRef,
  label: string,
  options: {
    height: number | undefined;
    pixelFormat: string;
    watermark: PlanWatermark | undefined;
    watermarkSource: StreamRef | undefined;
    outputWidth: number;
    outputIndex: number;
  },
): string[] {
  const scale = options.height === undefined ? [] : [`scale=-2:${options.height}`];
  const format = `format=${options.pixelFormat}`;
  const { watermark, watermarkSource } = options;
  if (!watermark || !watermarkSource) return [`${link(source)}${[...scale, format].join(",")}[${label}]`];

  const chains: string[] = [];
  let base = source;
  if (scale.length > 0) {
    base = pad(`vscaled${options.outputIndex}`);
    chains.push(`${link(source)}${scale[0]}${link(base)}`);
  }
  let mark = watermarkSource;
  if (watermark.widthPercent !== undefined) {
    const width = Math.max(1, Math.round((options.outputWidth * watermark.widthPercent) / 100));
    mark = pad(`wmscaled${options.outputIndex}`);
    chains.push(`${link(watermarkSource)}scale=${width}:-1${link(mark)}`);
  }
  chains.push(
    `${link(base)}${link(mark)}overlay=${OVERLAY_POSITION[watermark.position](watermark.marginPx)},${format}[${label}]`,
  );
  return chains;
}

/** What `scale=-2:H` gives: H × aspect, rounded to the nearest even number (libavfilter's scale_eval). */
export function scaledWidth(video: VideoStreamInfo, height: number | undefined): number {
  if (height === undefined) return video.width;
  return Math.round((height * video.width) / (video.height * 2)) * 2;
}

function requireVideo(info: MediaInfo): VideoStreamInfo {
  if (!info.video)
    throw new PlanNotApplicableError("an output asks for video but the input has none", "INPUT_INCOMPATIBLE");
  return info.video;
}

/** The plan's audio tracks, or the input's first; each with its channel count and the language to write. */
function audioTracks(
  plan: ExecutionPlan,
  info: MediaInfo,
): { streamIndex: number; channels: number; language?: string }[] {
  const count = info.audioStreams.length;
  if (count === 0) {
    throw new PlanNotApplicableError("an output asks for audio but the input has none", "INPUT_INCOMPATIBLE");
  }
  const chosen: PlanAudioTrack[] =
    plan.transforms.audioTracks.length > 0 ? plan.transforms.audioTracks : [{ streamIndex: 0 }];
  return chosen.map((track) => {
    const stream = info.audioStreams[track.streamIndex];
    if (!stream) {
      throw new PlanNotApplicableError(
        `audio stream ${track.streamIndex} is selected but the input has ${count} audio stream${count === 1 ? "" : "s"}`,
        "INPUT_INCOMPATIBLE",
      );
    }
    const language = track.language ?? stream.language;
    return { streamIndex: track.streamIndex, channels: stream.channels, ...(language ? { language } : {}) };
  });
}

function subtitlePath(request: FfmpegCommandRequest, index: number): string {
  const path = request.subtitlePaths[index];
  if (path === undefined) throw new Error(`no local file for transforms.subtitles.${index}`);
  return path;
}

function outputPath(paths: Readonly<Record<string, string>>, output: PlanOutput): string {
  const path = Object.hasOwn(paths, output.id) ? paths[output.id] : undefined;
  if (path === undefined) throw new Error(`no local path for output ${output.id}`);
  return path;
}

/**
 * ffmpeg reads a leading "-" as an option and "name:rest" as a protocol, so every local path
 * must be absolute; the input may also be an http(s) URL.
 */
function checkLocations(request: FfmpegCommandRequest): void {
  const local = [
    ...request.subtitlePaths,
    ...(request.watermarkPath === undefined ? [] : [request.watermarkPath]),
    ...Object.values(request.outputPaths),
  ];
  if (!request.input.path.startsWith("/") && !/^https?:\/\//.test(request.input.path)) {
    throw new Error(`input must be an absolute path or an http(s) URL: ${request.input.path}`);
  }
  for (const path of local) if (!path.startsWith("/")) throw new Error(`not an absolute path: ${path}`);
}
