/**
 * What the Manager-process scenarios (relay-killed, manager-killed-mid-dispatch) share: one
 * Manager run as operators run it (`npm run manager`, every background loop in it, the outbox
 * relay included) on the file's own schema and subject prefix, real agents enrolled through it,
 * s3rver behind the request log, and the kill: SIGKILL of the Manager's process group, then
 * the same command again on the same port, where the agents' MANAGER_URL still points.
 *
 * One Manager rather than a pair: a second replica's relay would drain the killed one's
 * committed rows, so nothing would show whether a restarted relay picks up what its previous
 * life committed but never published.
 *
 * The outbox audit reads every message of the prefix's events and commands streams (the
 * relay's only destinations; both keep every message) and compares their Nats-Msg-Ids with
 * the outbox's rows: each committed row published, and stored once.
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { type AgentProcess, agentDirs, killAgents, startAgent } from "@tjm/devstack/agent-process";
import { type ManagerProcess, startManagerProcess } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET, TestIssuer } from "@tjm/devstack/oidc-issuer";
import { startS3 } from "@tjm/devstack/s3rver";
import { freePort, waitFor } from "@tjm/devstack/services";
import { deleteStreams } from "@tjm/devstack/streams";
import { streams } from "@tjm/protocol";
import type { Sql } from "../../manager/src/platform/db.ts";
import { createProject } from "../../manager/src/projects/store.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";
import { putClip, tinyPlan } from "../harness/media-jobs.ts";
import { type S3RequestLog, startS3RequestLog } from "../harness/s3-request-log.ts";
import type { JobFacts } from "./checker.ts";
import { collectFacts, type SubmittedJob } from "./scenario.ts";

const TERMINAL_STATES = ["COMPLETED", "FAILED", "CANCELLED"];

export interface ManagerRigOptions {
  scenario: string;
  /**
   * Agents to start. Each takes one lease at a time: a CPU host runs one job per two cores,
   * and this machine has two.
   */
  agents: number;
}

/** What the events and commands streams hold against the outbox's rows. */
export interface OutboxAudit {
  outboxRows: number;
  unpublishedRows: number;
  streamMessages: number;
  /** Messages whose Nats-Msg-Id another message of the streams already carries. */
  duplicateMessages: number;
  /** Published rows whose message is in neither stream. */
  missingMessages: number;
  /** Messages no outbox row announced. */
  strayMessages: number;
  /** Acknowledged jobs without a job.created event, or without a job.updated to COMPLETED. */
  jobsWithoutCreated: string[];
  jobsWithoutCompleted: string[];
}

export interface ManagerRig {
  /** The file's schema, as the test reads it (not the Manager's pool). */
  sql: Sql;
  store: S3RequestLog;
  agents: AgentProcess[];
  manager(): ManagerProcess;
  /** Submits the tiniest real job writing under /media-out/<scenario>/<key>/; undefined unless answered 201. */
  submit(key: string): Promise<SubmittedJob | undefined>;
  /** Waits until no Worker is ONLINE (none can be given a lease). */
  untilNoWorkerOnline(timeoutMs: number): Promise<void>;
  /** Waits until the current Manager's output, past `offset` characters, has a line with message `msg`. */
  untilManagerLogs(msg: string, offset: number, timeoutMs: number): Promise<void>;
  /** SIGKILLs the Manager; resolves once its whole process group is gone. */
  kill(): Promise<void>;
  /** When each kill struck. */
  kills: number[];
  /**
   * Each destination of `jobs` written more than once, with every write's copy source and its
   * time relative to the kill before it: the evidence behind a duplicate-output verdict.
   */
  rewrites(jobs: SubmittedJob[]): string[];
  /** Starts the Manager again on its port; resolves once it answers ready, with how long that took. */
  restart(): Promise<number>;
  /** Waits until the outbox holds no unpublished row; how long that took. */
  untilOutboxPublished(timeoutMs: number): Promise<number>;
  unpublishedRows(): Promise<number>;
  /**
   * The outbox as a kill left it: the last row committed and how many were not yet published.
   * Read once the Manager is dead, so it holds still.
   */
  outboxLeft(): Promise<{ lastId: string; unpublished: number }>;
  /**
   * Waits (polling every few ms) until the outbox holds a row not yet published; false when
   * none showed within `timeoutMs`.
   */
  untilUnpublished(timeoutMs: number): Promise<boolean>;
  /** Waits until every row up to `lastId` is published. */
  untilPublishedThrough(lastId: string, timeoutMs: number): Promise<void>;
  /** Waits (without failing: the checker judges) until every job is terminal; how many are not. */
  untilTerminal(jobs: SubmittedJob[], timeoutMs: number): Promise<number>;
  auditOutbox(jobs: SubmittedJob[]): Promise<OutboxAudit>;
  /** The checker's facts of the jobs, from the schema, the request log and every agent's log. */
  facts(jobs: SubmittedJob[]): Promise<JobFacts[]>;
  close(): Promise<void>;
}

export async function startManagerRig(options: ManagerRigOptions): Promise<ManagerRig> {
  const { scenario } = options;
  const services = testServices();
  const cleanups: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => {});
  };
  try {
    const schema = await createTestSchema(services.databaseUrl);
    cleanups.push(() => schema.drop());
    cleanups.push(() => deleteStreams(services.natsUrl, schema.schema));
    const issuer = await TestIssuer.start();
    cleanups.push(() => issuer.close());
    const s3 = await startS3({ buckets: ["media-in", "media-out"] });
    cleanups.push(() => s3.stop());
    const store = await startS3RequestLog(s3.port);
    cleanups.push(() => store.close());
    const scratch = await agentDirs();
    cleanups.push(() => scratch.cleanup());
    await putClip(s3, { bucket: "media-in", key: "tiny.mp4" }, 1, "160x120");
    const { projectId } = await createProject(schema.sql, `org-${scenario}`, scenario);

    const port = await freePort();
    const env: Record<string, string> = {
      DATABASE_URL: services.databaseUrl,
      DATABASE_SCHEMA: schema.schema,
      NATS_URL: services.natsUrl,
      NATS_AUTH: "none",
      NATS_SUBJECT_PREFIX: schema.schema,
      // Tokens of the harness's issuer, trusted for operations; the provider is not the subject here.
      PROVIDER_ENABLED: "false",
      OIDC_ISSUER_URL: "http://127.0.0.1:1/oidc",
      OIDC_OPERATOR_ISSUER_URL: issuer.issuer,
      OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
      ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
      S3_ENDPOINT: store.endpoint,
      S3_REGION: s3.settings.region,
      S3_ACCESS_KEY_ID: s3.settings.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.settings.secretAccessKey,
      S3_FORCE_PATH_STYLE: String(s3.settings.forcePathStyle),
      S3_CHECKSUMS: s3.settings.checksums,
      HEARTBEAT_INTERVAL_MS: "500",
      // Well past a restart on a busy machine: the Workers' silence while the Manager is down
      // must not be taken for their loss.
      WORKER_LOST_AFTER_MS: "20000",
      DISPATCH_TIMEOUT_MS: "20000",
      LOG_LEVEL: "info",
    };
    let manager = await startManagerProcess("node", env, port);
    cleanups.push(() => manager.kill());

    let token: { value: string; until: number } | undefined;
    const operatorToken = async () => {
      if (!token || token.until < Date.now()) {
        token = { value: await issuer.token({ expiresInSeconds: 3600 }), until: Date.now() + 3_000_000 };
      }
      return token.value;
    };
    const operations = async (path: string, body: unknown) =>
      fetch(`${manager.baseUrl}/api/v1/operations${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${await operatorToken()}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    cleanups.push(() => killAgents());
    const agents: AgentProcess[] = [];
    for (let slot = 1; slot <= options.agents; slot++) {
      const enrollment = await operations("/enrollment-tokens", {});
      if (enrollment.status !== 201) {
        throw new Error(`enrollment token: ${enrollment.status} ${await enrollment.text()}`);
      }
      const name = `${scenario}-${slot}`;
      const agent = startAgent({
        MANAGER_URL: manager.baseUrl,
        ENROLLMENT_TOKEN: ((await enrollment.json()) as { token: string }).token,
        WORKER_STATE_DIR: `${scratch.root}/state-${name}`,
        WORKER_WORK_DIR: `${scratch.root}/work-${name}`,
        WORKER_NAME: name,
        WORKER_CAPACITY: "1",
        LOG_LEVEL: "info",
      });
      agents.push(agent);
      await agent.waitForMessage("worker started", 60_000);
    }

    const kills: number[] = [];
    const unpublishedRows = async () => {
      const [row] = await schema.sql<{ count: number }[]>`
        select count(*)::int as count from outbox where published_at is null`;
      return row?.count ?? 0;
    };

    return {
      sql: schema.sql,
      store,
      agents,
      manager: () => manager,
      async submit(key) {
        const { executionPlan, destinations } = tinyPlan(`/media-out/${scenario}/${key}`);
        const response = await operations("/jobs", { projectId, executionPlan });
        if (response.status !== 201) return undefined;
        const { id } = (await response.json()) as { id: string };
        return { jobId: id, destinations };
      },
      async untilNoWorkerOnline(timeoutMs) {
        await waitFor(
          "no Worker ONLINE",
          async () => {
            const [row] = await schema.sql<{ count: number }[]>`
              select count(*)::int as count from workers where connectivity = 'ONLINE'`;
            return row?.count === 0;
          },
          timeoutMs,
          100,
        );
      },
      async untilManagerLogs(msg, offset, timeoutMs) {
        const line = JSON.stringify({ msg }).slice(1, -1);
        await waitFor(
          `the Manager to log "${msg}"`,
          async () => manager.output().includes(line, offset),
          timeoutMs,
          5,
        );
      },
      kills,
      async kill() {
        kills.push(Date.now());
        await manager.kill();
      },
      rewrites(jobs) {
        const sinceKill = (at: number) => {
          const kill = kills.filter((time) => time <= at).at(-1);
          return kill === undefined
            ? "before any kill"
            : `${at - kill} ms after kill ${kills.indexOf(kill) + 1}`;
        };
        return jobs.flatMap((job) =>
          job.destinations.flatMap((path) => {
            const writes = store.writesTo(path);
            if (writes.length < 2) return [];
            const described = writes.map(
              (write) => `${write.copySource ?? "a put"} (${sinceKill(write.at)})`,
            );
            return [`${path} written ${writes.length} times: ${described.join("; ")}`];
          }),
        );
      },
      async restart() {
        const started = Date.now();
        manager = await startManagerProcess("node", env, port);
        return Date.now() - started;
      },
      unpublishedRows,
      async outboxLeft() {
        const [row] = await schema.sql<{ lastId: string; unpublished: number }[]>`
          select coalesce(max(id), 0)::text as last_id,
                 count(*) filter (where published_at is null)::int as unpublished
          from outbox`;
        return row ?? { lastId: "0", unpublished: 0 };
      },
      async untilUnpublished(timeoutMs) {
        return waitFor(
          "an unpublished outbox row",
          async () => (await unpublishedRows()) > 0,
          timeoutMs,
          2,
        ).then(
          () => true,
          () => false,
        );
      },
      async untilPublishedThrough(lastId, timeoutMs) {
        let left = 0;
        await waitFor(
          () => `the outbox published through row ${lastId} (${left} rows left)`,
          async () => {
            const [row] = await schema.sql<{ count: number }[]>`
              select count(*)::int as count from outbox
              where published_at is null and id <= ${lastId}::bigint`;
            left = row?.count ?? 0;
            return left === 0;
          },
          timeoutMs,
          50,
        );
      },
      async untilOutboxPublished(timeoutMs) {
        const started = Date.now();
        let left = 0;
        await waitFor(
          () => `the outbox published (${left} rows left)`,
          async () => {
            left = await unpublishedRows();
            return left === 0;
          },
          timeoutMs,
          50,
        );
        return Date.now() - started;
      },
      async untilTerminal(jobs, timeoutMs) {
        const ids = jobs.map((job) => job.jobId);
        let left = ids.length;
        await waitFor(
          () => `every job terminal (${left} of ${ids.length} not)`,
          async () => {
            const [row] = await schema.sql<{ count: number }[]>`
              select count(*)::int as count from jobs
              where id = any(${ids}::uuid[]) and state = any(${TERMINAL_STATES}::text[])`;
            left = ids.length - (row?.count ?? 0);
            return left === 0;
          },
          timeoutMs,
          500,
        ).catch((err: unknown) => console.warn(`[chaos] ${scenario}: ${(err as Error).message}`));
        return left;
      },
      auditOutbox: (jobs) => auditOutbox(schema.sql, services.natsUrl, schema.schema, jobs),
      facts: (jobs) => collectFacts(schema.sql, store, jobs, agents),
      close: cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

async function auditOutbox(
  sql: Sql,
  natsUrl: string,
  prefix: string,
  jobs: SubmittedJob[],
): Promise<OutboxAudit> {
  const rows = await sql<{ messageId: string; published: boolean }[]>`
    select message_id, published_at is not null as published from outbox`;
  const nc = await connect({ servers: natsUrl });
  const seen = new Map<string, number>();
  const created = new Set<string>();
  const completed = new Set<string>();
  let streamMessages = 0;
  try {
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    const { events, commands } = streams(prefix);
    for (const stream of [events.name, commands.name]) {
      const total = (await jsm.streams.info(stream)).state.messages;
      streamMessages += total;
      // An ordered consumer from the first message: reads the stream without changing it.
      const consumer = await js.consumers.get(stream);
      let read = 0;
      while (read < total) {
        const batch = await consumer.fetch({ max_messages: Math.min(500, total - read), expires: 5000 });
        let got = 0;
        for await (const message of batch) {
          got++;
          const id = message.headers?.get("Nats-Msg-Id") ?? "";
          seen.set(id, (seen.get(id) ?? 0) + 1);
          const envelope = message.json<{ kind: string; data: { jobId?: string; to?: string } }>();
          if (envelope.kind === "job.created" && envelope.data.jobId) created.add(envelope.data.jobId);
          if (envelope.kind === "job.updated" && envelope.data.to === "COMPLETED" && envelope.data.jobId) {
            completed.add(envelope.data.jobId);
          }
        }
        read += got;
        if (got === 0) throw new Error(`${stream} holds ${total} messages, but only ${read} could be read`);
      }
    }
  } finally {
    await nc.close();
  }
  const announced = new Set(rows.map((row) => row.messageId));
  return {
    outboxRows: rows.length,
    unpublishedRows: rows.filter((row) => !row.published).length,
    streamMessages,
    duplicateMessages: [...seen.values()].reduce((sum, count) => sum + count - 1, 0),
    missingMessages: rows.filter((row) => row.published && !seen.has(row.messageId)).length,
    strayMessages: [...seen.keys()].filter((id) => !announced.has(id)).length,
    jobsWithoutCreated: jobs.filter((job) => !created.has(job.jobId)).map((job) => job.jobId),
    jobsWithoutCompleted: jobs.filter((job) => !completed.has(job.jobId)).map((job) => job.jobId),
  };
}
