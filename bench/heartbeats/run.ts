/**
 * Heartbeats: one Manager on Node watching many simulated Workers, each registered through
 * the real route and heartbeating on core NATS from this process, spread evenly over the
 * interval. Measures the Manager's CPU and memory while all heartbeat, then how late the
 * SUSPECTED and OFFLINE transitions of the Workers that stop are recorded, and whether any
 * Worker that kept heartbeating changed connectivity.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { createUser } from "@nats-io/nkeys";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { registrationBody } from "@tjm/devstack/fixtures/worker-registration";
import {
  encodeMessage,
  HeartbeatSchema,
  PROTOCOL_VERSION,
  subjects,
  type WorkerRegistrationResponse,
} from "@tjm/protocol";
import type { BenchContext } from "../scenario.ts";
import { issueEnrollmentToken } from "../shared/api.ts";
import { HttpClient } from "../shared/load.ts";
import { freshManagerSchema, startManager } from "../shared/manager-process.ts";
import { cpuSeconds, findProcessTree, rssBytes } from "../shared/proc.ts";
import { type Spread, spread } from "../shared/stats.ts";

export interface HeartbeatResult {
  workers: number;
  intervalMs: number;
  lostAfterMs: number;
  connections: number;
  registrationSeconds: number;
  registrationFailures: number;
  firstRegistrationError: string | undefined;
  windowSeconds: number;
  /** Heartbeats published during the window, per second. */
  heartbeatsPerSecond: number;
  /** CPU seconds per wall second of the process running the Manager's code (1 = one core). */
  managerCpuShare: number;
  /** The same for npm, sh and the Manager together. */
  treeCpuShare: number;
  rssStartBytes: number;
  rssEndBytes: number;
  rssMaxBytes: number;
  stopped: number;
  /** Lag in ms from each stopped Worker's deadline to its transition; `samples` were recorded. */
  suspected: Spread;
  offline: Spread;
  /** Transitions of the Workers that never stopped heartbeating, over the whole run. */
  keptTransitions: number;
  /** Transitions of the stopped Workers before they stopped. */
  stoppedEarlyTransitions: number;
}

const REGISTRATIONS_PATH = "/api/v1/worker/registrations";
const TICK_MS = 5;
const POLL_MS = 250;

interface SimulatedWorker {
  workerId: string;
  instanceId: string;
  subject: string;
  nc: NatsConnection;
  /** Offset of its heartbeats within the interval, so the load is even across the second. */
  phaseMs: number;
  nextAt: number;
  lastSentAt: number;
  stopped: boolean;
}

/** Publishes every Worker's heartbeat at its phase of each interval, from a fast timer. */
class HeartbeatPacer {
  readonly workers: SimulatedWorker[] = [];
  sent = 0;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly epoch = Date.now();

  constructor(private readonly intervalMs: number) {
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  /** Starts heartbeating at the Worker's next phase, within one interval of its registration. */
  add(worker: Omit<SimulatedWorker, "nextAt" | "lastSentAt" | "stopped">): void {
    const now = Date.now();
    const elapsed = now - this.epoch;
    let nextAt = this.epoch + Math.floor(elapsed / this.intervalMs) * this.intervalMs + worker.phaseMs;
    if (nextAt < now) nextAt += this.intervalMs;
    this.workers.push({ ...worker, nextAt, lastSentAt: Number.NaN, stopped: false });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    const now = Date.now();
    for (const worker of this.workers) {
      if (worker.stopped || now < worker.nextAt) continue;
      worker.nc.publish(
        worker.subject,
        encodeMessage(HeartbeatSchema, {
          protocolVersion: PROTOCOL_VERSION,
          workerId: worker.workerId,
          instanceId: worker.instanceId,
          sentAt: new Date(now).toISOString(),
          activeAttempts: [],
          freeCapacity: 4,
        }),
      );
      worker.lastSentAt = now;
      this.sent++;
      worker.nextAt += this.intervalMs;
      // Behind by a whole interval (a stalled loop): resume the rhythm rather than burst.
      if (worker.nextAt <= now) worker.nextAt = now + this.intervalMs;
    }
  }
}

interface Transition {
  workerId: string;
  to: string;
  atMs: number;
}

export async function benchHeartbeats(context: BenchContext): Promise<HeartbeatResult> {
  const settings = context.settings.heartbeats;
  const { schema, env } = await freshManagerSchema(context, "heartbeats");
  const manager = await startManager("node", env, context.cleanup, {
    HEARTBEAT_INTERVAL_MS: String(settings.intervalMs),
    WORKER_LOST_AFTER_MS: String(settings.lostAfterMs),
  });
  const tree = findProcessTree("DATABASE_SCHEMA", schema);
  context.log(`heartbeats: Manager pid ${tree.manager} (group ${tree.pids.join(", ")})`);

  const connections = await Promise.all(
    Array.from({ length: settings.connections }, () => connect({ servers: context.natsUrl })),
  );
  context.cleanup.defer("close the heartbeat connections", async () => {
    await Promise.all(connections.map((nc) => nc.close()));
  });
  const pacer = new HeartbeatPacer(settings.intervalMs);
  context.cleanup.defer("stop heartbeating", async () => pacer.stop());
  const client = new HttpClient(manager.baseUrl, context.token, settings.registrationConcurrency);
  context.cleanup.defer("close the registration client", async () => client.close());

  // Registration, with each Worker heartbeating as soon as it is registered.
  const registrationStarted = performance.now();
  let next = 0;
  let registrationFailures = 0;
  let firstRegistrationError: string | undefined;
  await Promise.all(
    Array.from({ length: settings.registrationConcurrency }, async () => {
      for (let index = next++; index < settings.workers; index = next++) {
        try {
          const token = await issueEnrollmentToken(client);
          const body = Buffer.from(
            JSON.stringify(registrationBody(createUser(), { enrollmentToken: token })),
          );
          const registered = await client.expect(201, "POST", REGISTRATIONS_PATH, body);
          const { workerId, instanceId } = JSON.parse(registered.body) as WorkerRegistrationResponse;
          pacer.add({
            workerId,
            instanceId,
            subject: subjects.workerHeartbeat(schema, workerId),
            nc: connections[index % connections.length] as NatsConnection,
            phaseMs: (index * settings.intervalMs) / settings.workers,
          });
        } catch (err) {
          registrationFailures++;
          firstRegistrationError ??= err instanceof Error ? err.message : String(err);
        }
      }
    }),
  );
  const registrationSeconds = (performance.now() - registrationStarted) / 1000;
  client.close();
  context.log(
    `heartbeats: ${pacer.workers.length} Workers registered in ${registrationSeconds.toFixed(1)} s (${registrationFailures} failures)`,
  );
  if (pacer.workers.length <= settings.stopped)
    throw new Error(`only ${pacer.workers.length} Workers registered`);

  // Steady state: every Worker heartbeats; the Manager's CPU and memory over the window.
  await sleep(Math.max(context.settings.warmupSeconds * 1000, settings.intervalMs));
  const sentBefore = pacer.sent;
  const windowStarted = performance.now();
  const managerCpuBefore = cpuSeconds([tree.manager]);
  const treeCpuBefore = cpuSeconds(tree.pids);
  const rssStartBytes = rssBytes(tree.manager);
  let rssMaxBytes = rssStartBytes;
  const windowEnds = windowStarted + settings.seconds * 1000;
  while (performance.now() < windowEnds) {
    await sleep(Math.min(1000, windowEnds - performance.now()));
    rssMaxBytes = Math.max(rssMaxBytes, rssBytes(tree.manager));
  }
  const windowSeconds = (performance.now() - windowStarted) / 1000;
  const managerCpuShare = (cpuSeconds([tree.manager]) - managerCpuBefore) / windowSeconds;
  const treeCpuShare = (cpuSeconds(tree.pids) - treeCpuBefore) / windowSeconds;
  const rssEndBytes = rssBytes(tree.manager);
  const heartbeatsPerSecond = (pacer.sent - sentBefore) / windowSeconds;
  context.log(
    `heartbeats: Manager CPU ${(managerCpuShare * 100).toFixed(1)} % of a core, RSS ${(rssEndBytes / 2 ** 20).toFixed(0)} MiB`,
  );

  // Every k-th Worker stops (so they are spread over the phases); the others carry on.
  const stride = Math.floor(pacer.workers.length / settings.stopped);
  const stopped = pacer.workers.filter((_, index) => index % stride === 0).slice(0, settings.stopped);
  const stoppedAt = Date.now();
  for (const worker of stopped) worker.stopped = true;
  const stoppedIds = new Set(stopped.map((worker) => worker.workerId));
  const outbox = context.admin(`${schema}.outbox`);
  const readTransitions = () =>
    context.admin<Transition[]>`
      select payload->>'workerId' as "workerId", payload->>'to' as "to",
             (extract(epoch from created_at) * 1000)::float8 as "atMs"
      from ${outbox}
      where kind = 'worker.updated' and payload->>'change' = 'connectivity'`;
  const lastSent = Math.max(...stopped.map((worker) => worker.lastSentAt));
  const giveUpAt = lastSent + settings.lostAfterMs + 2 * settings.intervalMs + 5000;
  for (;;) {
    const offline = (await readTransitions()).filter(
      (row) => row.to === "OFFLINE" && stoppedIds.has(row.workerId),
    ).length;
    if (offline >= stopped.length || Date.now() > giveUpAt) break;
    await sleep(POLL_MS);
  }
  // One more interval, in which a Worker still heartbeating would show a late flap.
  await sleep(settings.intervalMs);
  pacer.stop();
  context.log(`heartbeats: stop phase took ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s`);

  const transitions = await readTransitions();
  await Promise.all(connections.map((nc) => nc.close()));
  await manager.stop();
  const byWorker = new Map(stopped.map((worker) => [worker.workerId, worker]));
  const suspectedLags: number[] = [];
  const offlineLags: number[] = [];
  let keptTransitions = 0;
  let stoppedEarlyTransitions = 0;
  for (const row of transitions) {
    const worker = byWorker.get(row.workerId);
    if (!worker) {
      keptTransitions++;
      continue;
    }
    if (row.atMs < stoppedAt) {
      stoppedEarlyTransitions++;
      continue;
    }
    if (row.to === "SUSPECTED") suspectedLags.push(row.atMs - (worker.lastSentAt + 2 * settings.intervalMs));
    if (row.to === "OFFLINE") offlineLags.push(row.atMs - (worker.lastSentAt + settings.lostAfterMs));
  }
  return {
    workers: pacer.workers.length,
    intervalMs: settings.intervalMs,
    lostAfterMs: settings.lostAfterMs,
    connections: settings.connections,
    registrationSeconds,
    registrationFailures,
    firstRegistrationError,
    windowSeconds,
    heartbeatsPerSecond,
    managerCpuShare,
    treeCpuShare,
    rssStartBytes,
    rssEndBytes,
    rssMaxBytes,
    stopped: stopped.length,
    suspected: spread(suspectedLags),
    offline: spread(offlineLags),
    keptTransitions,
    stoppedEarlyTransitions,
  };
}
