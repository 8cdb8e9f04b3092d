/**
 * The ffmpeg capability probe: what this host's ffmpeg can really do, whether that is
 * enough for the Worker's pool, and how many jobs the host takes at once. The Worker sends
 * the report when it registers.
 */
import { cpus } from "node:os";
import { capabilityNames } from "./capabilities.ts";
import {
  type Certification,
  capacity,
  certify,
  type HardwareEncoderResult,
  listedHardwareEncoders,
  type WorkerPool,
} from "./certify.ts";
import { parseCodecList, parseFilters, parseHwaccels, parseVersion } from "./parse.ts";
import { describeExit, runFfmpeg } from "./run-ffmpeg.ts";
import { selfTestEncoders } from "./self-test.ts";

export { FfmpegUnavailableError } from "./run-ffmpeg.ts";

export interface ProbeOptions {
  pool: WorkerPool;
  /** FFMPEG_PATH; "ffmpeg" is looked up on PATH. */
  ffmpegPath?: string;
  /** WORKER_CAPACITY: lowers the capacity the host would take by default. */
  capacityCap?: number;
  /** Bound on each ffmpeg run, listing or self-test. */
  timeoutMs?: number;
  /** The host's cores; defaults to what the OS reports. */
  cores?: number;
}

export interface ProbeReport {
  ffmpegVersion: string;
  /** Names as capabilities.ts describes them: "libx264", "decoder:h264_cuvid", "filter:scale_cuda", "hwaccel:cuda". */
  capabilities: string[];
  /** Every listed hardware encoder the probe self-tested, passed or not. */
  hardwareEncoders: HardwareEncoderResult[];
  certification: Certification;
  capacity: number;
}

/**
 * 10 s: a healthy self-test takes well under a second, and creating a first GPU context
 * takes a few; beyond that the driver is stuck and the encoder would stall jobs too.
 */
export const DEFAULT_PROBE_TIMEOUT_MS = 10_000;

export async function probeFfmpeg(options: ProbeOptions): Promise<ProbeReport> {
  const ffmpegPath = options.ffmpegPath ?? "ffmpeg";
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const list = async (flag: string) => {
    const run = await runFfmpeg(ffmpegPath, ["-hide_banner", flag], timeoutMs);
    if (run.timedOut) throw new Error(`ffmpeg ${flag} timed out after ${timeoutMs} ms`);
    if (run.exitCode !== 0) {
      const stderr = run.stderr.trim();
      throw new Error(`ffmpeg ${flag} ${describeExit(run)}${stderr === "" ? "" : `: ${stderr}`}`);
    }
    return run.stdout;
  };
  const [versionText, encodersText, decodersText, filtersText, hwaccelsText] = await Promise.all([
    list("-version"),
    list("-encoders"),
    list("-decoders"),
    list("-filters"),
    list("-hwaccels"),
  ]);
  const { version } = parseVersion(versionText);
  const encoders = parseCodecList(encodersText, "Encoders").map((entry) => entry.name);
  const listing = {
    encoders,
    decoders: parseCodecList(decodersText, "Decoders").map((entry) => entry.name),
    filters: parseFilters(filtersText).map((entry) => entry.name),
    hwaccels: parseHwaccels(hwaccelsText),
  };
  const hardwareEncoders = await selfTestEncoders(ffmpegPath, listedHardwareEncoders(encoders), timeoutMs);
  return {
    ffmpegVersion: version,
    capabilities: capabilityNames(listing, hardwareEncoders),
    hardwareEncoders,
    certification: certify(options.pool, encoders, hardwareEncoders),
    capacity: capacity(options.pool, options.cores ?? cpus().length, options.capacityCap),
  };
}
