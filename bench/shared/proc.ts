/**
 * What the bench reads of another process from /proc (Linux): which processes make up a
 * Manager, their CPU time, the Manager's resident memory and its open-files limit.
 *
 * `startManagerProcess` hands back no process id (it starts `npm run manager` in its own
 * process group: npm, the shell and the Manager's node), so the processes are
 * found by the environment they all inherit: the Manager's schema is unique to the run.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

export interface ProcessTree {
  /** npm, sh and the Manager: everything started for it. */
  pids: number[];
  /** The process running the Manager's code (the leaf whose command line runs main.node.ts). */
  manager: number;
}

const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return undefined;
  }
}

/** The fields of /proc/<pid>/stat after the command name, which may itself hold spaces. */
function statFields(pid: number): string[] | undefined {
  const stat = readOrUndefined(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // fields[0] is the state (field 3 of proc(5)), so field n is fields[n - 3].
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Every process whose environment holds `NAME=value`. */
export function findProcessTree(name: string, value: string): ProcessTree {
  const marker = `\0${name}=${value}\0`;
  const pids = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => pid !== process.pid)
    .filter((pid) => `\0${readOrUndefined(`/proc/${pid}/environ`) ?? ""}`.includes(marker));
  const parents = new Set(pids.map((pid) => Number(statFields(pid)?.[1])));
  const leaves = pids.filter((pid) => !parents.has(pid));
  const manager =
    leaves.find((pid) => readOrUndefined(`/proc/${pid}/cmdline`)?.includes("main.node.ts")) ?? leaves[0];
  if (manager === undefined) throw new Error(`no process has ${name}=${value} in its environment`);
  return { pids, manager };
}

/** Every process whose command name (/proc/<pid>/comm) is `name`, e.g. "postgres". */
export function processesNamed(name: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => readOrUndefined(`/proc/${pid}/comm`)?.trim() === name);
}

/** Fields `field` and `field + 1` of /proc/<pid>/stat (proc(5)'s numbering), in seconds, summed over the processes. */
function statSeconds(pids: number[], field: number): number {
  let ticks = 0;
  for (const pid of pids) {
    const fields = statFields(pid);
    if (fields) ticks += Number(fields[field - 3]) + Number(fields[field - 2]);
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}

/** User + system CPU seconds the processes used so far (the ones gone since count nothing). */
export function cpuSeconds(pids: number[]): number {
  // utime and stime are fields 14 and 15.
  return statSeconds(pids, 14);
}

/**
 * User + system CPU seconds of the processes' children that have ended and been waited for
 * (cutime + cstime): for a Worker agent, the ffmpeg and ffprobe runs it finished.
 */
export function reapedChildrenCpuSeconds(pids: number[]): number {
  // cutime and cstime are fields 16 and 17.
  return statSeconds(pids, 16);
}

/** CPU seconds of the whole machine so far, all cores: busy and in total (busy + idle + iowait). */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = (readOrUndefined("/proc/stat") ?? "").split("\n").find((entry) => entry.startsWith("cpu "));
  const values = (line ?? "").trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = values;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: busy / CLOCK_TICKS_PER_SECOND, total: (busy + idle + iowait) / CLOCK_TICKS_PER_SECOND };
}

/** Resident set size in bytes (VmRSS), NaN once the process is gone. */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readOrUndefined(`/proc/${pid}/status`) ?? "");
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** The soft and hard limits on open files of a process ("unlimited" as Infinity). */
export function openFilesLimit(pid: number | "self"): { soft: number; hard: number } {
  const match = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readOrUndefined(`/proc/${pid}/limits`) ?? "");
  const parse = (raw: string | undefined) => (raw === "unlimited" ? Number.POSITIVE_INFINITY : Number(raw));
  return { soft: parse(match?.[1]), hard: parse(match?.[2]) };
}

/**
 * Raises a running process's soft limit on open files to `wanted` (within its hard limit)
 * with prlimit(1); returns the soft limit it has afterwards.
 */
export function raiseOpenFilesLimit(pid: number, wanted: number, log: (line: string) => void): number {
  const { soft, hard } = openFilesLimit(pid);
  if (soft >= wanted) return soft;
  const target = Math.min(wanted, hard);
  try {
    execFileSync("prlimit", [
      "--pid",
      String(pid),
      `--nofile=${target}:${Number.isFinite(hard) ? hard : target}`,
    ]);
  } catch (err) {
    log(`cannot raise the open-files limit of ${pid}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return openFilesLimit(pid).soft;
}
