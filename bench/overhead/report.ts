/** The overhead scenario's tables (summary, pairs, where a job's time goes) and targets. */
import { fine, fps, met, mib, ms, seconds, table } from "../report.ts";
import { median } from "../shared/stats.ts";
import { type OverheadResult, type PlatformCpu, platformTotal, type RawRun, type TjmRun } from "./run.ts";

const TARGETS = {
  /** A TJM job's submit -> COMPLETED over the plain ffmpeg command's wall time, at most (issue 28). */
  overheadWallRatio: 1.02,
  /** ffmpeg's fps inside the agent over the plain command's, at least. */
  overheadFpsRatio: 0.97,
  /** A TJM job's wall time less ffmpeg's own run, median, at most (issue 28). */
  outsideFfmpegMs: 250,
  /** The Manager applied `accepted` -> the agent spawned ffmpeg, median, at most (issue 28). */
  acceptedToSpawnedMs: 30,
  /** ffmpeg's last progress -> the Manager applied `completed`, median, at most (issue 28). */
  lastProgressToCompletedMs: 150,
};

/** "yes" / "NO" for a measured value against its bound; n/a when it could not be measured. */
const atMost = (value: number, bound: number) => met(Number.isFinite(value) ? value <= bound : undefined);
const atLeast = (value: number, bound: number) => met(Number.isFinite(value) ? value >= bound : undefined);

/** Cores busy with anything but ffmpeg and TJM's processes (the Manager, the agent and s3rver). */
const others = (run: Pick<RawRun, "busyCores" | "cpuSeconds" | "seconds" | "platformCpu">) =>
  run.busyCores - (run.cpuSeconds + platformTotal(run.platformCpu)) / run.seconds;

const PLATFORM_PROCESSES: [string, (cpu: PlatformCpu) => number][] = [
  ["Manager (Node)", (cpu) => cpu.manager],
  ["Worker agent (Bun; not its ffmpeg and ffprobes)", (cpu) => cpu.agent],
  ["s3rver", (cpu) => cpu.store],
  ["all three", platformTotal],
];

/**
 * TJM's own processes' CPU beside the plain command (up, no job) and during the job, per second
 * of each run; the job's own share is its CPU less the idle rate of its pair over its length.
 */
function platformTable(pairs: { raw: RawRun; tjm: TjmRun }[]): string {
  const perSecond = (cpuSeconds: number, seconds: number) => (cpuSeconds / seconds) * 1000;
  return table(
    [
      `process (medians of ${pairs.length} pairs)`,
      "beside the plain command, no job: CPU ms per s",
      "during the TJM job: CPU ms per s",
      "the job's own CPU ms (during, less the idle rate over the job's length)",
    ],
    PLATFORM_PROCESSES.map(([label, of]) => [
      label,
      ms(median(pairs.map(({ raw }) => perSecond(of(raw.platformCpu), raw.seconds)))),
      ms(median(pairs.map(({ tjm }) => perSecond(of(tjm.platformCpu), tjm.seconds)))),
      ms(
        median(
          pairs.map(
            ({ raw, tjm }) =>
              (of(tjm.platformCpu) - (of(raw.platformCpu) / raw.seconds) * tjm.seconds) * 1000,
          ),
        ),
      ),
    ]),
  );
}

export function overheadReport(result: OverheadResult | undefined): string {
  const title = "## Overhead: one 720p transcode, plain ffmpeg vs a TJM job (S3 to S3 on loopback)";
  if (!result) return `${title}\n\nnot measured`;
  const wall = result.tjmSeconds / result.rawSeconds;
  const speed = result.tjmFps / result.rawFps;
  const busy = (runs: { busyCores: number }[]) => median(runs.map((run) => run.busyCores));
  const pairs = result.raw.flatMap((raw, index) => {
    const tjm = result.tjm[index];
    return tjm ? [{ index, raw, tjm, others: Math.max(others(raw), others(tjm)) }] : [];
  });
  const quietest = pairs.reduce<(typeof pairs)[number] | undefined>(
    (best, pair) => (best && best.others <= pair.others ? best : pair),
    undefined,
  );
  const quietestRow = (measure: "seconds" | "fps", format: (value: number) => string) => [
    `same, the pair with the least other load (pair ${quietest ? quietest.index + 1 : "n/a"})`,
    format(quietest?.raw[measure] ?? Number.NaN),
    format(quietest?.tjm[measure] ?? Number.NaN),
    fine(quietest ? quietest.tjm[measure] / quietest.raw[measure] : Number.NaN),
    "",
    "",
  ];
  const outsideMs = median(result.tjm.map((run) => (run.seconds - run.ffmpegSeconds) * 1000));
  const summary = table(
    [
      `median of ${result.raw.length} runs each`,
      "plain ffmpeg",
      "TJM job",
      "TJM / plain",
      "target",
      "target met",
    ],
    [
      [
        "wall time s (plain: spawn to exit; TJM: submit to COMPLETED)",
        seconds(result.rawSeconds),
        seconds(result.tjmSeconds),
        fine(wall),
        `<= ${TARGETS.overheadWallRatio.toFixed(2)}x`,
        atMost(wall, TARGETS.overheadWallRatio),
      ],
      ["same, median of the per-pair ratios", "", "", fine(result.pairedWallRatio), "", ""],
      quietestRow("seconds", seconds),
      [
        "time outside ffmpeg per job ms (TJM wall time less ffmpeg's own run)",
        "",
        ms(outsideMs),
        "",
        `<= ${TARGETS.outsideFfmpegMs} ms`,
        atMost(outsideMs, TARGETS.outsideFfmpegMs),
      ],
      [
        "ffmpeg's fps (its last progress block: frames / its run time)",
        fps(result.rawFps),
        fps(result.tjmFps),
        fine(speed),
        `>= ${TARGETS.overheadFpsRatio.toFixed(2)}x`,
        atLeast(speed, TARGETS.overheadFpsRatio),
      ],
      ["same, median of the per-pair ratios", "", "", fine(result.pairedFpsRatio), "", ""],
      quietestRow("fps", fps),
      [
        "ffmpeg's own run s (TJM: spawned to its last progress message)",
        seconds(result.rawSeconds),
        seconds(result.ffmpegInAgentSeconds),
        fine(result.ffmpegInAgentSeconds / result.rawSeconds),
        "",
        "",
      ],
      [
        "ffmpeg's CPU s, user + system (TJM: with the agent's two ffprobes)",
        seconds(result.rawCpuSeconds),
        seconds(result.tjmCpuSeconds),
        fine(result.tjmCpuSeconds / result.rawCpuSeconds),
        "",
        "",
      ],
      [
        "whole machine busy during the run, cores (ffmpeg included)",
        seconds(busy(result.raw)),
        seconds(busy(result.tjm)),
        "",
        "",
        "",
      ],
    ],
  );
  const runs = table(
    [
      "pair",
      "order",
      "plain s / fps / CPU s",
      "TJM s / fps / CPU s",
      "TJM ffmpeg s",
      "TJM / plain wall, fps",
      "machine busy plain / TJM (cores)",
      "of which others' (not ffmpeg, not TJM)",
      "TJM's processes CPU s",
      "load avg at start",
    ],
    result.raw.map((raw, index) => {
      const tjm = result.tjm[index];
      if (!tjm) return [String(index + 1), "", "", "", "", "", "", "", "", ""];
      return [
        String(index + 1),
        index % 2 === 0 ? "plain, TJM" : "TJM, plain",
        `${seconds(raw.seconds)} / ${fps(raw.fps)} / ${seconds(raw.cpuSeconds)}`,
        `${seconds(tjm.seconds)} / ${fps(tjm.fps)} / ${seconds(tjm.cpuSeconds)}`,
        seconds(tjm.ffmpegSeconds),
        `${fine(tjm.seconds / raw.seconds)}, ${fine(tjm.fps / raw.fps)}`,
        `${seconds(raw.busyCores)} / ${seconds(tjm.busyCores)}`,
        `${seconds(others(raw))} / ${seconds(others(tjm))}`,
        seconds(platformTotal(tjm.platformCpu)),
        `${raw.loadAverage.toFixed(1)} / ${tjm.loadAverage.toFixed(1)}`,
      ];
    }),
  );
  const stages = result.stageMedians;
  /** Label, ms from submit, ms since the previous step, and that step's bound when it has one. */
  const steps: [string, number, number, number?][] = [
    ["Manager applied `accepted` (attempt RUNNING)", stages.accepted, stages.accepted],
    [
      "agent spawned ffmpeg (input streamed through the relay, ffprobe beside it; negative: before `accepted` was applied)",
      stages.ffmpegSpawned,
      stages.ffmpegSpawned - stages.accepted,
      TARGETS.acceptedToSpawnedMs,
    ],
    ["ffmpeg's last progress message", stages.ffmpegDone, stages.ffmpegDone - stages.ffmpegSpawned],
    [
      "Manager applied `completed` (output described, uploaded to staging, log uploaded)",
      stages.completionAccepted,
      stages.completionAccepted - stages.ffmpegDone,
      TARGETS.lastProgressToCompletedMs,
    ],
    [
      "job COMPLETED (staged output promoted, manifest written)",
      stages.completed,
      stages.completed - stages.completionAccepted,
    ],
  ];
  const breakdown = table(
    ["step of the TJM job", "ms from submit (median)", "ms since the previous step", "target", "target met"],
    steps.map(([label, at, step, bound]) => [
      label,
      ms(at),
      ms(step),
      bound === undefined ? "" : `<= ${bound} ms since the previous step`,
      bound === undefined ? "" : atMost(step, bound),
    ]),
  );
  return `${title}\n\nInput: ${result.clipSeconds} s ${result.clipSize} at ${result.clipRate} fps, testsrc2 + 440 Hz sine, H.264 CRF 18 + AAC (${mib(result.clipBytes)}). Output: the plan's H.264 720p at preset "fast" (x264 veryfast, CRF 23) + AAC 128k in MP4. One Worker agent (Bun), s3rver in a child process, one Manager on Node. Runs go in adjacent pairs, plain first in odd pairs and TJM first in even ones. The plain command is the agent's own (buildFfmpegCommand on the plan as stored by the Manager, probeMedia of the clip):\n\n\`\`\`text\nffmpeg ${result.args.join(" ")}\n\`\`\`\n\n${summary}\n\n${runs}\n\nffmpeg is CPU-bound on every core it finds, so anything else busy on the machine slows whichever contender runs at the time: compare the pairs whose "others'" load (the machine's busy cores less ffmpeg's CPU and the CPU of the Manager, the agent and s3rver, which are up during the plain runs too) is near zero. ffmpeg's CPU seconds hardly depend on that load. TJM's own processes take CPU from ffmpeg during a job, and beside the plain command too, where the Manager's loops still poll the database on their ticks:\n\n${platformTable(pairs)}\n\nWhere a TJM job's time goes (medians of each step; median time outside ffmpeg per job ${ms(outsideMs)} ms):\n\n${breakdown}\n\nThe store's own share of the step after ffmpeg: one PutObject of the plain run's output (${mib(median(result.raw.map((run) => run.outputBytes)))}) to the same s3rver from the bench process took ${ms(result.outputPutMs)} ms (median); s3rver writes and MD5-hashes every byte in one Node process.`;
}

export function overheadTargets(result: OverheadResult | undefined): string[][] {
  const wall = result ? result.tjmSeconds / result.rawSeconds : Number.NaN;
  const speed = result ? result.tjmFps / result.rawFps : Number.NaN;
  const outsideMs = result
    ? median(result.tjm.map((run) => (run.seconds - run.ffmpegSeconds) * 1000))
    : Number.NaN;
  const spawnMs = result ? result.stageMedians.ffmpegSpawned - result.stageMedians.accepted : Number.NaN;
  const completionMs = result
    ? result.stageMedians.completionAccepted - result.stageMedians.ffmpegDone
    : Number.NaN;
  return [
    [
      `720p job from S3 to S3 <= ${TARGETS.overheadWallRatio.toFixed(2)}x the plain ffmpeg command's wall time (medians)`,
      fine(wall),
      atMost(wall, TARGETS.overheadWallRatio),
    ],
    [
      `time outside ffmpeg per 720p job <= ${TARGETS.outsideFfmpegMs} ms (median)`,
      `${ms(outsideMs)} ms`,
      atMost(outsideMs, TARGETS.outsideFfmpegMs),
    ],
    [
      `Manager applied \`accepted\` -> ffmpeg spawned <= ${TARGETS.acceptedToSpawnedMs} ms (median)`,
      `${ms(spawnMs)} ms`,
      atMost(spawnMs, TARGETS.acceptedToSpawnedMs),
    ],
    [
      `ffmpeg's last progress -> Manager applied \`completed\` <= ${TARGETS.lastProgressToCompletedMs} ms (median)`,
      `${ms(completionMs)} ms`,
      atMost(completionMs, TARGETS.lastProgressToCompletedMs),
    ],
    [
      `ffmpeg fps in the job >= ${TARGETS.overheadFpsRatio.toFixed(2)}x the plain command's (medians)`,
      fine(speed),
      atLeast(speed, TARGETS.overheadFpsRatio),
    ],
  ];
}
