/**
 * A node of a three-node NATS cluster failing under load: two Managers on one schema, streams
 * (and their durable consumers) with three replicas, operator mode with per-Worker credentials,
 * four real agents running real ffmpeg against s3rver behind a request log. Each run submits a
 * batch of tiny jobs and, once some are under way, faults one node, picked by the seed (a third
 * of the runs the node leading the commands stream):
 *
 * - nats-node-killed: SIGKILL, then started again on its ports and store 2-6 s later;
 * - nats-node-paused: SIGSTOP for 10-20 s, at least until the streams it led have elected
 *   leaders elsewhere (the cluster's failure detection), then SIGCONT. Its clients keep their
 *   connections to it meanwhile, as they would to a machine that stalls.
 *
 * A run ends when every job of its batch is terminal and every replica in the cluster (streams
 * and consumers) is current again. The checker judges every job of every run.
 *
 * Recovery times: a job completing after the fault; (paused) the streams the node led having
 * leaders elsewhere; every replica current after the node is back.
 */
import { readdir, readFile } from "node:fs/promises";
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { type AgentProcess, agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type NatsCluster, type NatsClusterNode, startNatsCluster } from "@tjm/devstack/nats-cluster";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { freePort, waitFor } from "@tjm/devstack/services";
import { streams } from "@tjm/protocol";
import { afterAll, beforeAll, describe, it } from "vitest";
import { TestManager, type TestManagerOptions } from "../harness/manager.ts";
import { Freezer, putClip, startTestAgent, tinyPlan } from "../harness/media-jobs.ts";
import { type S3RequestLog, startS3RequestLog } from "../harness/s3-request-log.ts";
import {
  chaosRuns,
  collectFacts,
  pause,
  reportScenario,
  type SubmittedJob,
  seededRandom,
} from "./scenario.ts";

type NodeFault = "kill" | "pause";

const RUNS = chaosRuns({ full: 10, ci: 2 });
const JOBS_PER_RUN = 10;
const AGENTS = 4;
/** One lease at a time per agent: a batch runs in waves, so the fault meets jobs in flight. */
const AGENT_ENV = { WORKER_CAPACITY: "1", LOG_LEVEL: "info" };
/** Past a killed node's restart and most of a pause: a Worker riding the node is rarely taken for lost. */
const LOST_AFTER_MS = 15_000;
/** A batch that is not terminal by then is judged stuck. */
const BATCH_BUDGET_MS = 180_000;
const REPLICAS_BUDGET_MS = 90_000;
const LEADERS_BUDGET_MS = 60_000;

let cluster: NatsCluster;
/** The test's own connection, for stream and consumer info; quick to leave a paused node. */
let observer: NatsConnection;
let s3: S3Server;
let store: S3RequestLog;
let scratch: Awaited<ReturnType<typeof agentDirs>>;
let a: TestManager;
let b: TestManager;
let projectId: string;
const agents: AgentProcess[] = [];
const freezer = new Freezer();

beforeAll(async () => {
  [cluster, s3, scratch] = await Promise.all([
    startNatsCluster({ size: 3 }),
    startS3({ buckets: ["media-in", "media-out"] }),
    agentDirs(),
  ]);
  observer = await connect({
    servers: cluster.nodes.map((node) => node.url),
    authenticator: credsAuthenticator(new TextEncoder().encode(cluster.managerCreds)),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // A frozen node keeps the socket open: only missed pings tell the client to move on.
    pingInterval: 1000,
    maxPingOut: 3,
  });
  store = await startS3RequestLog(s3.port);
  await putClip(s3, { bucket: "media-in", key: "tiny.mp4" }, 1, "160x120");
  const settings: TestManagerOptions = {
    natsUrl: cluster.url,
    natsAuth: cluster,
    storage: { ...s3.settings, endpoint: store.endpoint },
    heartbeatIntervalMs: 500,
    lostAfterMs: LOST_AFTER_MS,
    dispatchTimeoutMs: 20_000,
    env: { NATS_STREAM_REPLICAS: "3" },
  };
  a = await TestManager.start(settings);
  b = await TestManager.start({
    ...settings,
    schema: a.schema,
    issuerUrl: a.issuerUrl,
    port: await freePort(),
  });
  ({ projectId } = await a.createProject());
  agents.push(
    ...(await Promise.all(
      Array.from({ length: AGENTS }, (_, index) =>
        startTestAgent(index % 2 === 0 ? a : b, scratch.root, `nats-node-${index + 1}`, AGENT_ENV),
      ),
    )),
  );
}, 180_000);

afterAll(async () => {
  freezer.thawAll();
  await killAgents();
  await observer?.close();
  await b?.close({ keepStreams: true });
  await a?.close();
  await store?.close();
  await s3?.stop();
  await cluster?.stop();
  await scratch?.cleanup();
});

/** Not probed at creation: a cluster mid-election may not answer. */
const observed = () => jetstreamManager(observer, { checkAPI: false, timeout: 2000 });

/** Whether the group has a leader and its other replicas are all known and current. */
function settled(
  cluster: { leader?: string; replicas?: { current: boolean }[] } | undefined,
  replicas: number,
) {
  const peers = cluster?.replicas ?? [];
  return Boolean(cluster?.leader) && peers.length === replicas - 1 && peers.every((peer) => peer.current);
}

/** The replicated groups of the (private) cluster: its streams and their durable consumers. */
interface Groups {
  streams: string[];
  consumers: { stream: string; name: string }[];
}

/** Listed while the cluster is healthy: a listing taken mid-election may leave a group out. */
async function groupsOf(jsm: JetStreamManager): Promise<Groups> {
  const groups: Groups = { streams: [], consumers: [] };
  for (const stream of await jsm.streams.list().next()) {
    groups.streams.push(stream.config.name);
    for (const consumer of await jsm.consumers.list(stream.config.name).next()) {
      if (consumer.config.durable_name)
        groups.consumers.push({ stream: stream.config.name, name: consumer.name });
    }
  }
  return groups;
}

/** Whether every group has a leader and every one of its replicas is current. */
async function everyReplicaCurrent(jsm: JetStreamManager, groups: Groups): Promise<boolean> {
  try {
    // Listing is the meta leader's to answer: the cluster as a whole has one again.
    await jsm.streams.names().next();
    for (const name of groups.streams) {
      const stream = await jsm.streams.info(name);
      if (!settled(stream.cluster, stream.config.num_replicas)) return false;
      for (const { name: consumerName } of groups.consumers.filter((consumer) => consumer.stream === name)) {
        const consumer = await jsm.consumers.info(name, consumerName);
        if (!settled(consumer.cluster, consumer.config.num_replicas || stream.config.num_replicas))
          return false;
      }
    }
    return true;
  } catch {
    // Unanswered while the cluster elects.
    return false;
  }
}

async function untilEveryReplicaCurrent(groups: Groups): Promise<void> {
  const jsm = await observed();
  await waitFor(
    "every stream and consumer replica current",
    () => everyReplicaCurrent(jsm, groups),
    REPLICAS_BUDGET_MS,
    250,
  );
}

/** The answer of `ask` once the cluster gives one: a leader election leaves it unavailable a moment. */
async function answered<T>(what: string, ask: () => Promise<T>): Promise<T> {
  let answer: { value: T } | undefined;
  let last = "";
  await waitFor(
    () => `${what} (last: ${last})`,
    async () => {
      try {
        answer = { value: await ask() };
        return true;
      } catch (err) {
        last = (err as Error).message;
        return false;
      }
    },
    LEADERS_BUDGET_MS,
    250,
  );
  return (answer as { value: T }).value;
}

/** The streams whose leader is `name` now. */
async function streamsLedBy(name: string): Promise<string[]> {
  const jsm = await observed();
  const led: string[] = [];
  for (const stream of await jsm.streams.list().next()) {
    if (stream.cluster?.leader === name) led.push(stream.config.name);
  }
  return led;
}

/**
 * Whether each of `names` answers with a leader other than `node`; asked one by one, as a
 * listing may leave a leaderless stream out.
 */
async function ledElsewhere(names: string[], node: string): Promise<boolean> {
  const jsm = await observed();
  for (const name of names) {
    const leader = (await jsm.streams.info(name).catch(() => undefined))?.cluster?.leader;
    if (!leader || leader === node) return false;
  }
  return true;
}

/**
 * The pid of the node's nats-server: the cluster module does not expose it, so it is found
 * among this process's children by its configuration file (`<dir>/<name>.conf`).
 */
async function pidOf(node: NatsClusterNode): Promise<number> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // The command name may hold spaces and parentheses; the fields after it do not.
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (parent !== process.pid) continue;
    const args = (await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "")).split("\0");
    if (args.some((arg) => arg.endsWith(`/${node.name}.conf`))) return Number(entry);
  }
  throw new Error(`no nats-server child of this process runs ${node.name}`);
}

/** The tiniest real job (tinyPlan) under `prefix`. */
function tinyJob(prefix: string) {
  return { projectId, executionPlan: tinyPlan(prefix).executionPlan };
}

async function countIn(jobIds: string[], states: string[]): Promise<number> {
  const [row] = await a.sql<{ count: number }[]>`
    select count(*)::int as count from jobs where id = any(${jobIds}::uuid[]) and state = any(${states})`;
  return row?.count ?? 0;
}

async function runNodeFaults(scenario: string, fault: NodeFault): Promise<void> {
  const random = seededRandom(scenario);
  const started = Date.now();
  const jobs: SubmittedJob[] = [];
  const samples = { completing: [] as number[], leaders: [] as number[], replicas: [] as number[] };
  const struck: string[] = [];
  let leaderStruck = 0;
  let noneLeft = 0;
  let runs = 0;
  const commandsStream = streams(a.subjectPrefix).commands.name;
  // The Workers' consumers and the Managers' exist once the agents are registered.
  const groups = await answered("the streams and their consumers", async () => groupsOf(await observed()));
  await untilEveryReplicaCurrent(groups);

  for (let run = 0; run < RUNS; run++) {
    const batch: string[] = [];
    for (let index = 0; index < JOBS_PER_RUN; index++) {
      const prefix = `/media-out/${scenario}/${run}/${index}`;
      const jobId = await (index % 2 === 0 ? a : b).submitJob(tinyJob(prefix));
      batch.push(jobId);
      jobs.push({ jobId, destinations: [`${prefix}/tiny.mp4`, `${prefix}/manifest.json`] });
    }
    // Strike once some jobs are running and up to three have completed.
    const completedBefore = Math.floor(random.next() * 4);
    await waitFor(
      `run ${run}: ${completedBefore} job(s) COMPLETED and one RUNNING`,
      async () =>
        (await countIn(batch, ["COMPLETED"])) >= completedBefore && (await countIn(batch, ["RUNNING"])) > 0,
      BATCH_BUDGET_MS,
      50,
    );

    const leader = await answered(`the leader of ${commandsStream}`, async () => {
      const elected = (await (await observed()).streams.info(commandsStream)).cluster?.leader;
      if (!elected) throw new Error("no leader elected");
      return elected;
    });
    const byLeader = random.next() < 1 / 3;
    const node = byLeader
      ? cluster.nodes.find((candidate) => candidate.name === leader)
      : random.pick(cluster.nodes);
    if (!node) throw new Error(`no node is named ${leader}, the leader of ${commandsStream}`);
    if (node.name === leader) leaderStruck++;
    struck.push(node.name);
    const pid = fault === "pause" ? await pidOf(node) : undefined;
    const led =
      pid === undefined
        ? []
        : await answered(`the streams ${node.name} leads`, () => streamsLedBy(node.name));

    const faultAt = Date.now();
    if (pid === undefined) await node.stop("SIGKILL");
    else freezer.freeze(pid);
    // A paused node's clients see nothing wrong: its peers must notice it and take over.
    if (led.length > 0) {
      await waitFor(
        `run ${run}: ${led.join(", ")} led by a node other than ${node.name}`,
        () => ledElsewhere(led, node.name),
        LEADERS_BUDGET_MS,
        250,
      );
      samples.leaders.push(Date.now() - faultAt);
    }
    const downMs = fault === "kill" ? 2000 + random.next() * 4000 : 10_000 + random.next() * 10_000;
    await pause(Math.max(0, faultAt + downMs - Date.now()));
    const backAt = Date.now();
    if (pid === undefined) await node.start();
    else freezer.thaw(pid);
    await untilEveryReplicaCurrent(groups);
    samples.replicas.push(Date.now() - backAt);

    let settledBatch = true;
    await waitFor(
      () => `run ${run}: its ${JOBS_PER_RUN} jobs terminal`,
      async () => (await countIn(batch, ["COMPLETED", "FAILED", "CANCELLED"])) === JOBS_PER_RUN,
      BATCH_BUDGET_MS,
      250,
    ).catch((err: unknown) => {
      console.warn(`[chaos] ${scenario}: ${(err as Error).message}`);
      settledBatch = false;
    });
    runs++;
    const [next] = await a.sql<{ completedAt: Date | null }[]>`
      select min(completed_at) as completed_at from jobs
      where id = any(${batch}::uuid[]) and state = 'COMPLETED' and completed_at > ${new Date(faultAt)}`;
    if (next?.completedAt) samples.completing.push(next.completedAt.getTime() - faultAt);
    else noneLeft++;
    // A stuck batch is judged as it stands; later runs would only blur which fault left it.
    if (!settledBatch) break;
  }
  // What a thawed or reconnected Worker still had in flight must change nothing once it lands.
  await pause(3000);

  const jobIds = jobs.map((job) => job.jobId);
  const [attempts] = await a.sql<{ count: number }[]>`
    select count(*)::int as count from attempts where job_id = any(${jobIds}::uuid[])`;
  // Why Workers refused leases (a frozen node delays leases; a thawed Worker may still be busy).
  const submitted = new Set(jobIds);
  const refusals = new Map<string, number>();
  for (const line of agents.flatMap((agent) => agent.logs)) {
    if (line.msg === "lease rejected" && submitted.has(line.jobId as string)) {
      refusals.set(String(line.reason), (refusals.get(String(line.reason)) ?? 0) + 1);
    }
  }
  const perNode = cluster.nodes.map(
    (node) => `${node.name} ${struck.filter((name) => name === node.name).length}`,
  );
  const down = fault === "kill" ? "killed, restarted after 2-6 s" : "frozen 10-20 s, then continued";
  await reportScenario(
    {
      scenario,
      runs,
      seed: random.seed,
      durationMs: Date.now() - started,
      recoveries: [
        { what: "a job completing after the fault", samplesMs: samples.completing },
        ...(fault === "pause" ? [{ what: "its streams led elsewhere", samplesMs: samples.leaders }] : []),
        {
          what: `replicas current after ${fault === "kill" ? "the restart" : "SIGCONT"}`,
          samplesMs: samples.replicas,
        },
      ],
      notes: [
        `a node ${down} per run (${perNode.join(", ")}); the commands stream's leader in ${leaderStruck} of ${runs}`,
        `${AGENTS} agents, capacity 1, ${JOBS_PER_RUN} jobs a run; attempts in all: ${attempts?.count} for ${jobs.length} jobs` +
          (noneLeft > 0 ? `; ${noneLeft} run(s) had no job completing after the fault` : ""),
        `leases rejected: ${refusals.size === 0 ? "none" : [...refusals].map(([reason, count]) => `${count}× ${reason}`).join(", ")}`,
      ],
    },
    await collectFacts(a.sql, store, jobs, agents),
  );
}

describe("a node of a three-node NATS cluster", () => {
  it(`killed and restarted under load loses nothing and runs nothing twice, over ${RUNS} runs`, async () => {
    await runNodeFaults("nats-node-killed", "kill");
  });

  it(`paused past failure detection loses nothing and runs nothing twice, over ${RUNS} runs`, async () => {
    await runNodeFaults("nats-node-paused", "pause");
  });
});
