/**
 * Scale-out: two Managers on one schema, a three-node NATS cluster (routes on loopback,
 * JetStream, streams with three replicas, operator mode with per-Worker credentials), four
 * real agents running real ffmpeg against s3rver. While the jobs run, the node leading the
 * commands stream is killed (SIGKILL) and started again on its ports and store, then one
 * Manager is restarted on its port. Every job completes exactly once: one attempt succeeds,
 * no lease is executed twice (the agents' logs and the attempts agree), each destination is
 * written by one promotion (the S3 requests, recorded by a proxy in front of s3rver), and
 * both Managers show the same jobs and stream their events and progress.
 *
 * CLUSTER_JOBS sets how many jobs (default 100; the fault suite runs 500). The fault suite's
 * checker judges every job too, and under `npm run chaos` its verdicts join the table.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { type AgentProcess, agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type NatsCluster, startNatsCluster } from "@tjm/devstack/nats-cluster";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { freePort, waitFor } from "@tjm/devstack/services";
import { MANAGER_REPORTS_CONSUMER, streams, workerConsumerName } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectFacts, reportScenario } from "../chaos/scenario.ts";
import { TestManager, type TestManagerOptions } from "../harness/manager.ts";
import { putClip, startTestAgent, tinyPlan } from "../harness/media-jobs.ts";
import { type S3RequestLog, startS3RequestLog } from "../harness/s3-request-log.ts";
import { subscribeEvents } from "../harness/sse.ts";

const JOBS = Number(process.env.CLUSTER_JOBS ?? 100);
const WORKERS = 4;
/** Leases each agent runs at once. */
const WORKER_CAPACITY = 2;
/** Jobs whose detail is compared between the Managers. */
const SAMPLE = 10;
/**
 * 100 jobs take 40-50 s on a quiet machine and over 150 s on a slow one while the rest of the
 * suite runs beside this file; the waits scale with the count, with room for that.
 */
const RUN_BUDGET_MS = Math.max(180_000, JOBS * 1_800);

let cluster: NatsCluster;
/** The test's own connection to the cluster, for stream and consumer info. */
let observer: NatsConnection;
let s3: S3Server;
let s3Log: S3RequestLog;
let scratch: Awaited<ReturnType<typeof agentDirs>>;
let a: TestManager;
let b: TestManager;
let settings: TestManagerOptions;
let projectId: string;
const agents: AgentProcess[] = [];

beforeAll(async () => {
  [cluster, s3, scratch] = await Promise.all([
    startNatsCluster({ size: 3 }),
    startS3({ buckets: ["media-in", "media-out"] }),
    agentDirs(),
  ]);
  observer = await connect({
    servers: cluster.nodes.map((node) => node.url),
    authenticator: credsAuthenticator(new TextEncoder().encode(cluster.managerCreds)),
  });
  s3Log = await startS3RequestLog(s3.port);
  await putClip(s3, { bucket: "media-in", key: "tiny.mp4" }, 1, "160x120");
  settings = {
    natsUrl: cluster.url,
    natsAuth: cluster,
    storage: { ...s3.settings, endpoint: s3Log.endpoint },
    heartbeatIntervalMs: 500,
    // Well past a node's restart: a Worker riding it must not be taken for lost.
    lostAfterMs: 15_000,
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
      Array.from({ length: WORKERS }, (_, index) =>
        startTestAgent(index % 2 === 0 ? a : b, scratch.root, `cluster-${index + 1}`, {
          WORKER_CAPACITY: String(WORKER_CAPACITY),
          LOG_LEVEL: "info",
        }),
      ),
    )),
  );
}, 120_000);

afterAll(async () => {
  await killAgents();
  await observer?.close();
  await b?.close({ keepStreams: true });
  await a?.close();
  await s3Log?.close();
  await s3?.stop();
  await cluster?.stop();
  await scratch?.cleanup();
});

const prefixOf = (index: number) => `/media-out/scale-out/${index}`;
const destinationOf = (index: number) => `${prefixOf(index)}/tiny.mp4`;
const manifestOf = (index: number) => `${prefixOf(index)}/manifest.json`;

/** The tiniest real job (tinyPlan), one prefix per index. */
function tinyJob(index: number) {
  return { projectId, executionPlan: tinyPlan(prefixOf(index)).executionPlan };
}

async function completedCount(jobIds: string[]): Promise<number> {
  const [row] = await a.sql<{ count: number }[]>`
    select count(*)::int as count from jobs where id = any(${jobIds}::uuid[]) and state = 'COMPLETED'`;
  return row?.count ?? 0;
}

/** The observer's JetStream API; not probed at creation, as a cluster mid-election may not answer. */
const observed = () => jetstreamManager(observer, { checkAPI: false });

/** Until every replica of the prefix's streams is current (a restarted node caught up). */
async function untilReplicasCurrent(prefix: string): Promise<void> {
  const jsm = await observed();
  await waitFor(
    "every stream replica current",
    async () => {
      for (const { name } of Object.values(streams(prefix))) {
        const info = await jsm.streams.info(name).catch(() => undefined);
        const replicas = info?.cluster?.replicas ?? [];
        if (!info?.cluster?.leader || replicas.length !== 2 || !replicas.every((peer) => peer.current)) {
          return false;
        }
      }
      return true;
    },
    60_000,
    250,
  );
}

/** The attempt ids of the agents' log lines with message `msg`, one entry per line. */
const loggedAttempts = (msg: string) =>
  agents.flatMap((agent) =>
    agent.logs.filter((line) => line.msg === msg).map((line) => line.attemptId as string),
  );

const duplicates = (values: string[]) => values.filter((value, index) => values.indexOf(value) !== index);

type EventsSubscriber = Awaited<ReturnType<typeof subscribeEvents>>;

/** The jobs whose job.updated to COMPLETED the subscriber received. */
const completionsSeen = (subscriber: EventsSubscriber) =>
  new Set(
    subscriber
      .events()
      .filter((event) => event.event === "job.updated")
      .map((event) => JSON.parse(event.data ?? "{}").data)
      .filter((data) => data?.to === "COMPLETED")
      .map((data) => data.jobId as string),
  );

const progressSeen = (subscriber: EventsSubscriber) =>
  subscriber.events().filter((event) => event.event === "job.progress").length;

describe("two Managers on a three-node NATS cluster", () => {
  it(
    `run ${JOBS} jobs on ${WORKERS} Workers through a node killed and restarted and a Manager restarted: each completes exactly once`,
    async () => {
      const started = Date.now();
      const timings: Record<string, number> = {};
      const mark = (what: string) => {
        timings[what] = Date.now() - started;
      };
      const prefix = a.subjectPrefix;
      const names = streams(prefix);
      const jsm = await observed();
      // Polled, as the consumers below: a stream or consumer created a moment ago may be answered
      // "not found" by another node until its group has a leader.
      const answered =
        <T>(read: () => Promise<T>) =>
        () =>
          read().catch(() => undefined);
      for (const { name } of Object.values(names)) {
        await expect
          .poll(
            answered(async () => (await jsm.streams.info(name)).config.num_replicas),
            {
              message: name,
              timeout: 10_000,
            },
          )
          .toBe(3);
      }
      // The durable consumers (the Manager's reports consumer, each Worker's commands) follow their stream.
      const durable = [
        ...(await a.sql<{ id: string }[]>`select id from workers`).map((row) => [
          names.commands.name,
          workerConsumerName(row.id),
        ]),
        [names.reports.name, MANAGER_REPORTS_CONSUMER],
      ] as const;
      for (const [stream, consumer] of durable) {
        await expect
          .poll(
            answered(async () => (await jsm.consumers.info(stream, consumer)).cluster?.replicas?.length),
            {
              message: consumer,
              timeout: 10_000,
            },
          )
          .toBe(2);
      }

      const eventsA = await subscribeEvents(a);
      let eventsB = await subscribeEvents(b);
      const jobIds: string[] = [];
      for (let index = 0; index < JOBS; index++) {
        jobIds.push(await (index % 2 === 0 ? a : b).submitJob(tinyJob(index)));
      }
      mark("submitted");

      await waitFor(
        "a fifth of the jobs COMPLETED",
        async () => (await completedCount(jobIds)) >= JOBS / 5,
        RUN_BUDGET_MS,
        100,
      );
      const leader = (await jsm.streams.info(names.commands.name)).cluster?.leader;
      const killed = cluster.nodes.find((node) => node.name === leader);
      if (!killed) throw new Error(`no node is named ${leader}, the leader of ${names.commands.name}`);
      await killed.stop("SIGKILL");
      mark(`${killed.name} (leading ${names.commands.name}) killed`);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await killed.start();
      mark(`${killed.name} restarted`);
      await untilReplicasCurrent(prefix);
      mark("its replicas current");

      await waitFor(
        "half the jobs COMPLETED",
        async () => (await completedCount(jobIds)) >= JOBS / 2,
        RUN_BUDGET_MS,
        100,
      );
      await eventsB.close();
      const port = Number(new URL(b.baseUrl).port);
      await b.close({ keepStreams: true });
      b = await TestManager.start({ ...settings, schema: a.schema, issuerUrl: a.issuerUrl, port });
      eventsB = await subscribeEvents(b);
      const completedBeforeB = new Set(
        (
          await a.sql<{ id: string }[]>`
          select id from jobs where id = any(${jobIds}::uuid[]) and state = 'COMPLETED'`
        ).map((row) => row.id),
      );
      mark("Manager B restarted");

      await waitFor(
        () => `all ${JOBS} jobs COMPLETED`,
        async () => (await completedCount(jobIds)) === JOBS,
        RUN_BUDGET_MS,
        200,
      );
      mark("all COMPLETED");

      // Exactly one attempt per job succeeded, and none is left running.
      const attempts = await a.sql<{ id: string; jobId: string; state: string; acceptedAt: Date | null }[]>`
      select id, job_id, state, accepted_at from attempts where job_id = any(${jobIds}::uuid[])`;
      const succeeded = attempts.filter((attempt) => attempt.state === "SUCCEEDED");
      expect(succeeded).toHaveLength(JOBS);
      expect(new Set(succeeded.map((attempt) => attempt.jobId)).size).toBe(JOBS);
      expect(
        attempts.filter((attempt) => !["SUCCEEDED", "FAILED", "CANCELLED"].includes(attempt.state)),
      ).toEqual([]);

      // No lease executed twice: across the agents each attempt was accepted, encoded and
      // completed at most once; what they accepted is what the Manager recorded as accepted, and
      // what they completed is exactly the attempts that succeeded.
      const accepted = loggedAttempts("lease accepted");
      const encoded = loggedAttempts("encoding");
      const finished = loggedAttempts("attempt completed");
      expect(duplicates(accepted)).toEqual([]);
      expect(duplicates(encoded)).toEqual([]);
      expect(duplicates(finished)).toEqual([]);
      expect([...finished].sort()).toEqual(succeeded.map((attempt) => attempt.id).sort());
      expect([...accepted].sort()).toEqual(
        attempts
          .filter((attempt) => attempt.acceptedAt !== null)
          .map((attempt) => attempt.id)
          .sort(),
      );

      // One promotion (a copy from staging) per destination, and one manifest per job.
      for (let index = 0; index < JOBS; index++) {
        const writes = s3Log.writesTo(destinationOf(index));
        expect(writes, destinationOf(index)).toHaveLength(1);
        expect(writes[0]?.copySource, destinationOf(index)).toMatch(/^\/?media-out\/\.tjm-staging\//);
        expect(s3Log.writesTo(manifestOf(index)), manifestOf(index)).toHaveLength(1);
      }

      // Either Manager streams the completions (A, never restarted, every one; the restarted B
      // every one after its restart) and the progress, and answers with the same detail.
      await waitFor(
        () => `A's events to show every completion (${completionsSeen(eventsA).size} of ${JOBS})`,
        async () => completionsSeen(eventsA).size === JOBS,
        10_000,
      );
      const sinceRestart = jobIds.filter((jobId) => !completedBeforeB.has(jobId));
      await waitFor(
        "B's events to show every completion since its restart",
        async () => sinceRestart.every((jobId) => completionsSeen(eventsB).has(jobId)),
        10_000,
      );
      expect(progressSeen(eventsA)).toBeGreaterThan(0);
      expect(progressSeen(eventsB)).toBeGreaterThan(0);
      const sample = jobIds.filter((_, index) => index % Math.ceil(JOBS / SAMPLE) === 0);
      for (const jobId of sample) expect(await b.job(jobId)).toEqual(await a.job(jobId));
      await eventsA.close();
      await eventsB.close();

      await reportScenario(
        {
          scenario: `scale-out-${JOBS}`,
          runs: 1,
          seed: 0,
          durationMs: Date.now() - started,
          recoveries: [],
          notes: [`${killed.name} killed and restarted, Manager B restarted`],
        },
        await collectFacts(
          a.sql,
          s3Log,
          jobIds.map((jobId, index) => ({ jobId, destinations: [destinationOf(index), manifestOf(index)] })),
          agents,
        ),
      );
      console.info(
        `[scale-out] ${JOBS} jobs on ${WORKERS} Workers x ${WORKER_CAPACITY}, ms since the first submit: ${JSON.stringify(timings)}; ` +
          `${attempts.length - JOBS} attempts beyond one per job; job.progress events: A ${progressSeen(eventsA)}, B ${progressSeen(eventsB)}; ` +
          `jobs per Worker ${agents.map((agent) => agent.logs.filter((line) => line.msg === "attempt completed").length).join("/")}`,
      );
    },
    RUN_BUDGET_MS + 120_000,
  );
});
