/**
 * A private nats-server with a file store restarted, once with SIGTERM and once with SIGKILL,
 * while leases are in flight to protocol-level Workers: delivered but not yet answered when
 * the server goes, and committed to the outbox (with their jobs' events) while it is down.
 * Afterwards every job completes with its one attempt, each attempt's lease reached one
 * Worker exactly once (redeliveries of the same message aside), and every committed outbox
 * row is published: none is left unpublished, and each is in its stream exactly once under
 * its message id.
 *
 * tests/execution/restarts.test.ts restarts NATS (SIGTERM) under a real agent mid-encode;
 * this file is about the leases and the outbox around the restart.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { S3Client } from "@aws-sdk/client-s3";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { samplePlan } from "@tjm/devstack/fixtures/plans";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { freePort, type NatsServer, startNatsServer, waitFor } from "@tjm/devstack/services";
import { type LeaseCommand, streams } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";
import { completeLease } from "./completion.ts";

const WORKERS = 2;
/** Jobs leased (and delivered) before the restart, and jobs submitted while NATS is down. */
const BEFORE = 4;
const DURING = 4;

let s3: S3Server;
let client: S3Client;
let storeDir: string;
let nats: NatsServer;
let manager: TestManager;
let projectId: string;
const workers: ProtocolWorker[] = [];

/** Leases are answered (accepted, then completed) only while this is on. */
let answering = false;
let stopping = false;
let responder: Promise<void> | undefined;
const answered = new Set<string>();

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-out"] });
  client = s3.client();
  storeDir = await mkdtemp(join(tmpdir(), "tjm-nats-faults-"));
  // Restarted on its port later: one below the ephemeral range, which no outbound connection takes meanwhile.
  nats = await startNatsServer({ storeDir, port: await freePort() });
  manager = await TestManager.start({
    natsUrl: nats.url,
    storage: s3.settings,
    // Workers stay ONLINE through the restart, so jobs submitted meanwhile are leased at once.
    heartbeatIntervalMs: 2000,
    lostAfterMs: 30_000,
    // Nothing may time out here: every lease must reach its Worker.
    dispatchTimeoutMs: 30_000,
  });
  ({ projectId } = await manager.createProject());
  for (let index = 0; index < WORKERS; index++) workers.push(await ProtocolWorker.start(manager));
  responder = respond();
}, 30_000);

afterAll(async () => {
  stopping = true;
  await responder;
  for (const worker of workers) await worker.stop();
  await manager?.close();
  await nats?.stop();
  await s3?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

/** Tries `step` until it succeeds: a Worker keeps a report until NATS stores it, as the agent does. */
async function untilDone(step: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      return await step();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function respond(): Promise<void> {
  while (!stopping) {
    const waiting: [ProtocolWorker, LeaseCommand][] = answering
      ? workers.flatMap((worker) =>
          worker
            .leases()
            .filter((lease) => !answered.has(lease.attemptId))
            .map((lease): [ProtocolWorker, LeaseCommand] => [worker, lease]),
        )
      : [];
    for (const [worker, lease] of waiting) {
      answered.add(lease.attemptId);
      await untilDone(() => worker.report("accepted", lease));
      await untilDone(() => completeLease(worker, lease, client));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function submit(run: string, index: number): Promise<string> {
  const plan = samplePlan();
  plan.outputs[0] = { ...plan.outputs[0], destinationUri: `s3://media-out/${run}/${index}.mp4` } as never;
  return manager.submitJob({ projectId, executionPlan: plan });
}

/** The jobs' leases each Worker received (each message once), with the envelope id it came in. */
const leasesOf = (jobIds: readonly string[]) =>
  workers.flatMap((worker) =>
    worker
      .leases()
      .filter((lease) => jobIds.includes(lease.jobId))
      .map((lease) => ({ lease, envelopeId: worker.envelopeIds[worker.commands.indexOf(lease)] })),
  );

async function unpublished(): Promise<number> {
  const [row] = await manager.sql<{ count: number }[]>`
    select count(*)::int as count from outbox where published_at is null`;
  return row?.count ?? 0;
}

/** The Nats-Msg-Id of every message in the stream, in order. */
async function messageIds(stream: string): Promise<string[]> {
  const nc = await connect({ servers: nats.url });
  try {
    const jsm = await jetstreamManager(nc);
    const { state } = await jsm.streams.info(stream);
    const ids: string[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      const message = await jsm.streams.getMessage(stream, { seq });
      ids.push(message?.header.get("Nats-Msg-Id") ?? "");
    }
    return ids;
  } finally {
    await nc.close();
  }
}

describe.each(["SIGTERM", "SIGKILL"] as const)(
  "nats-server stopped with %s and started on its store",
  (signal) => {
    it("loses no lease and no outbox row; every job completes with its one attempt", async () => {
      answering = false;
      const run = signal.toLowerCase();
      const before = await Promise.all(Array.from({ length: BEFORE }, (_, index) => submit(run, index)));
      await waitFor("the leases delivered", async () => leasesOf(before).length === BEFORE, 20_000, 20);

      await nats.stop(signal);
      const during = await Promise.all(
        Array.from({ length: DURING }, (_, index) => submit(run, BEFORE + index)),
      );
      // Committed while NATS is away: job.created events and the new jobs' leases wait in the outbox.
      await waitFor(
        "the new jobs leased",
        async () => {
          const [row] = await manager.sql<{ count: number }[]>`
          select count(*)::int as count from attempts
          where job_id = any(${during}::uuid[]) and state = 'DISPATCHED'`;
          return row?.count === DURING;
        },
        10_000,
        20,
      );
      expect(await unpublished()).toBeGreaterThanOrEqual(2 * DURING);

      nats = await startNatsServer({ storeDir, port: Number(new URL(nats.url).port) });
      answering = true;
      const jobs = [...before, ...during];
      for (const jobId of jobs) {
        const done = await manager.untilJob(jobId, "COMPLETED", { timeoutMs: 30_000 });
        expect(done.attempts.map((a: { state: string }) => a.state)).toEqual(["SUCCEEDED"]);
      }

      // One lease per job, to one Worker, in the message the outbox committed for it.
      const delivered = leasesOf(jobs);
      expect(delivered.map(({ lease }) => lease.jobId).sort()).toEqual([...jobs].sort());
      const leaseRows = await manager.sql<{ messageId: string; attemptId: string }[]>`
      select message_id, payload->>'attemptId' as attempt_id from outbox
      where kind = 'worker.command' and payload->>'type' = 'lease'
        and payload->>'jobId' = any(${jobs}::text[])`;
      expect(leaseRows).toHaveLength(jobs.length);
      expect(
        Object.fromEntries(delivered.map(({ lease, envelopeId }) => [lease.attemptId, envelopeId])),
      ).toEqual(Object.fromEntries(leaseRows.map((row) => [row.attemptId, row.messageId])));

      // Every committed row published, each stored once in its stream.
      await waitFor("the outbox drained", async () => (await unpublished()) === 0, 10_000, 50);
      const rows = await manager.sql<{ messageId: string; subject: string }[]>`
      select message_id, subject from outbox order by id`;
      const names = streams(manager.subjectPrefix);
      const commandIds = await messageIds(names.commands.name);
      const eventIds = await messageIds(names.events.name);
      expect([...commandIds].sort()).toEqual(
        rows
          .filter((row) => row.subject.startsWith("workers."))
          .map((row) => row.messageId)
          .sort(),
      );
      expect([...eventIds].sort()).toEqual(
        rows
          .filter((row) => row.subject.startsWith("events."))
          .map((row) => row.messageId)
          .sort(),
      );
      expect((await manager.request("/api/health/ready")).status).toBe(200);
    }, 60_000);
  },
);
