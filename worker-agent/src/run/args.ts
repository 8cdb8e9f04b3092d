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
 *
 * Streams are named by specifier, not by what a probe found, so ffmpeg can start before
 * ffprobe has answered: `0:V:0` is the first video stream that is not an attached picture
 * (cover art), `0:a:N` the plan's audio track N, and each output audio track takes its
 * source's stream tags (its language among them) with -map_metadata. An input lacking one of
 * them makes ffmpeg exit with "... matches no streams", which the Worker reports as
 * INPUT_INCOMPATIBLE (plan-errors.ts). Only what a specifier cannot say needs the probe's
 * MediaInfo first: see probeFactsNeeded.
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
   * options placed before its `-i` (the http protocol's reconnect settings); `info`: the
   * input's probe, required when probeFactsNeeded names a reason, otherwise only checked
   * against the plan (a missing stream fails here instead of in ffmpeg).
   */
  input: { path: string; info?: MediaInfo; options?: readonly string[] };
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
  /**
   * The length of every output: the input's duration less the removed segments. Undefined
   * when nothing is removed and no probe was given: the input's duration, which ffmpeg prints
   * and the probe tells while ffmpeg runs.
   */
  expectedDurationMs: number | undefined;
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

/**
 * Why the command cannot be built before the input's probe has answered, or undefined when
 * it can (most plans: ffmpeg then starts while ffprobe runs beside it). Each reason is a fact
 * no stream specifier or filter expression gives ffmpeg:
 * - removed segments: the kept spans are clipped to the input's duration (a segment past the
 *   end, or one reaching it, changes the graph and the expected duration), and SOFT subtitles
 *   are retimed against it before ffmpeg reads them;
 * - a watermark sized by widthPercent: its pixel width follows the input's aspect;
 * - opus above 256 kb/s: libopus's cap is per channel, so the track's channel count decides.
 * The plan's track languages need no probe: the input's come with -map_metadata.
 */
export function probeFactsNeeded(plan: ExecutionPlan): string | undefined {
  if (plan.transforms.removedSegments.length > 0)
    return "removed segments are clipped to the input's duration";
  if (plan.transforms.watermark?.widthPercent !== undefined && plan.outputs.some((output) => output.video))
    return "the watermark's width follows the input's aspect";
  if (
    plan.outputs.some(
      (output) => output.audio?.codec === "opus" && output.audio.bitrateKbps > OPUS_MAX_KBPS_PER_CHANNEL,
    )
  )
    return "libopus caps the bitrate per channel";
  return undefined;
}

/**
 * Throws INPUT_INCOMPATIBLE when the probed input lacks a stream the plan asks for: what
 * ffmpeg's "matches no streams" says, in the plan's terms.
 */
export function checkStreams(plan: ExecutionPlan, info: MediaInfo): void {
  if (plan.outputs.some((output) => output.video)) requireVideo(info);
  if (plan.outputs.some((output) => output.audio)) audioTracks(plan, info);
}

export function buildFfmpegCommand(request: FfmpegCommandRequest): FfmpegCommand {
  const { plan, pool, input, outputPaths } = request;
  const { info } = input;
  checkLocations(request);
  const needed = probeFactsNeeded(plan);
  if (needed !== undefined && info === undefined) throw new Error(`the input's probe is needed: ${needed}`);
  if (info) checkStreams(plan, info);

  const videoOutputs = plan.outputs.filter((output) => output.video !== undefined);
  const audioOutputs = plan.outputs.filter((output) => output.audio !== undefined);
  const tracks = audioOutputs.length > 0 ? audioTracks(plan, info) : [];

  const inputs = [...(input.options ?? []), "-i", input.path];
  const graph: string[] = [];

  let videoSource = videoOutputs.length > 0 ? inputStream("0:V:0") : undefined;
  const burnIn = plan.transforms.subtitles.findIndex((subtitle) => subtitle.mode === "BURN_IN");
  if (videoSource && burnIn >= 0) {
    graph.push(
      `${link(videoSource)}subtitles=filename=${filterArgument(subtitlePath(request, burnIn))}[burned]`,
    );
    videoSource = pad("burned");
  }

  const ranges = info ? keptRanges(plan.transforms.removedSegments, info.durationMs) : WHOLE_INPUT;
  const cut = !(ranges.length === 1 && ranges[0]?.startMs === 0 && ranges[0].endMs === undefined);
  let audioSources = tracks.map((track) => inputStream(`0:a:${track.streamIndex}`));
  if (cut) ({ videoSource, audioSources } = cutSegments(graph, ranges, videoSource, audioSources));

  let watermarkSources: StreamRef[] = [];
  if (videoOutputs.length > 0 && plan.transforms.watermark) {
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
    if (output.video && videoIndex >= 0) {
      const branch = videoBranches[videoIndex] as StreamRef;
      const encoder = VIDEO_ENCODERS[pool][output.video.codec];
      const label = `vout${outputIndex}`;
      graph.push(
        ...outputVideoChain(branch, label, {
          height: output.video.height,
          pixelFormat: encoderPixelFormat(encoderFamily(encoder)),
          watermark: plan.transforms.watermark,
          watermarkSource: watermarkSources[videoIndex],
          outputWidth: () => scaledWidth(requireVideo(info), output.video?.height),
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
        if (codec === "opus" && bitrateKbps > OPUS_MAX_KBPS_PER_CHANNEL) {
          const channels = track.channels();
          const opusMax = OPUS_MAX_KBPS_PER_CHANNEL * channels;
          if (channels > 0 && bitrateKbps > opusMax) args.push(`-b:a:${index}`, `${opusMax}k`);
        }
        // A filter's output carries no stream tags: the source track's come along explicitly.
        args.push(`-map_metadata:s:a:${index}`, `0:s:a:${track.streamIndex}`);
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
    expectedDurationMs: info ? keptDurationMs(ranges, info.durationMs) : undefined,
  };
}

/** Nothing removed: the input from its start to wherever it really ends. */
const WHOLE_INPUT: KeptRange[] = [{ startMs: 0, endMs: undefined }];

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
    /** Called only for a watermark sized by widthPercent, whose plan waited for the probe. */
    outputWidth: () => number;
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
    const width = Math.max(1, Math.round((options.outputWidth() * watermark.widthPercent) / 100));
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

function requireVideo(info: MediaInfo | undefined): VideoStreamInfo {
  if (info === undefined) throw new Error("the input's video size is needed but it was not probed");
  if (!info.video)
    throw new PlanNotApplicableError("an output asks for video but the input has none", "INPUT_INCOMPATIBLE");
  return info.video;
}

/**
 * The plan's audio tracks, or the input's first; each with the language the plan sets and its
 * channel count (asked only when it matters, by a plan that waited for the probe). With a
 * probe, a track the input lacks throws here; without one, ffmpeg finds out.
 */
function audioTracks(
  plan: ExecutionPlan,
  info: MediaInfo | undefined,
): { streamIndex: number; channels: () => number; language?: string }[] {
  const count = info?.audioStreams.length;
  if (count === 0) {
    throw new PlanNotApplicableError("an output asks for audio but the input has none", "INPUT_INCOMPATIBLE");
  }
  const chosen: PlanAudioTrack[] =
    plan.transforms.audioTracks.length > 0 ? plan.transforms.audioTracks : [{ streamIndex: 0 }];
  return chosen.map((track) => {
    if (info !== undefined && count !== undefined && !info.audioStreams[track.streamIndex]) {
      throw new PlanNotApplicableError(
        `audio stream ${track.streamIndex} is selected but the input has ${count} audio stream${count === 1 ? "" : "s"}`,
        "INPUT_INCOMPATIBLE",
      );
    }
    const channels = () => {
      if (info === undefined) throw new Error("the input's channel counts are needed but it was not probed");
      return info.audioStreams[track.streamIndex]?.channels ?? 0;
    };
    return {
      streamIndex: track.streamIndex,
      channels,
      ...(track.language ? { language: track.language } : {}),
    };
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
