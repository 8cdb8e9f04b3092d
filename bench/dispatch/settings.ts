import { positiveInteger } from "../shared/env.ts";

/** Where the Manager and its Worker reach NATS: the bench's one server, or a three-node cluster. */
export const DISPATCH_NATS = ["single", "cluster"] as const;
export type DispatchNats = (typeof DISPATCH_NATS)[number];

export interface DispatchSettings {
  /** Measured one-second jobs per NATS setup, run one at a time. */
  jobs: number;
  nats: DispatchNats[];
}

function readNats(env: NodeJS.ProcessEnv): DispatchNats[] {
  const named = (env.BENCH_DISPATCH_NATS || DISPATCH_NATS.join(",")).split(",").map((part) => part.trim());
  const unknown = named.filter((name) => !(DISPATCH_NATS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new Error(`BENCH_DISPATCH_NATS may name ${DISPATCH_NATS.join(", ")}, not ${unknown.join(", ")}`);
  return DISPATCH_NATS.filter((name) => named.includes(name));
}

export function readDispatchSettings(env: NodeJS.ProcessEnv): DispatchSettings {
  return { jobs: positiveInteger(env, "BENCH_DISPATCH_JOBS", "50"), nats: readNats(env) };
}
