/**
 * Who used the CPU while a round delivered: the server, the subscriber processes, this bench
 * process, and everything else on the machine (PostgreSQL, NATS, other work), each in cores
 * (1 = one core busy the whole time). The subscribers run on the same cores as the server.
 */
import { cpuSeconds, machineCpuSeconds } from "../shared/proc.ts";

export interface CpuShares {
  seconds: number;
  server: number;
  subscribers: number;
  bench: number;
  /** The whole machine busy, every process included. */
  machine: number;
  /** machine − server − subscribers − bench. */
  others: number;
}

/** Starts counting; the returned function reads the shares since. */
export function cpuWindow(serverPids: number[], subscriberPids: number[]): () => CpuShares {
  const read = () => ({
    at: performance.now(),
    server: cpuSeconds(serverPids),
    subscribers: cpuSeconds(subscriberPids),
    bench: cpuSeconds([process.pid]),
    machine: machineCpuSeconds().busy,
  });
  const before = read();
  return () => {
    const after = read();
    const seconds = (after.at - before.at) / 1000;
    const share = (key: "server" | "subscribers" | "bench" | "machine") =>
      (after[key] - before[key]) / seconds;
    const shares = {
      seconds,
      server: share("server"),
      subscribers: share("subscribers"),
      bench: share("bench"),
      machine: share("machine"),
    };
    return { ...shares, others: shares.machine - shares.server - shares.subscribers - shares.bench };
  };
}
