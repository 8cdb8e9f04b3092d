/**
 * A stream deleted under a running Manager (jsm.streams.delete, which also deletes every
 * consumer on it), with protocol-level Workers registered. The Manager creates the stream
 * and the consumers again, and what the deletion lost is recovered as the lifecycle says: a
 * lost lease by DISPATCH_TIMEOUT and the next attempt, a lost cancel by sending it again until
 * the Worker confirms; reports and events published afterwards reach the Manager and the SSE
 * subscribers.
 *
 * To have a command stored but not yet delivered when its stream goes, the test first deletes
 * the Worker's consumer: the command then waits in the stream, with nobody to deliver it to.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { waitFor } from "@tjm/devstack/services";
import { MANAGER_REPORTS_CONSUMER, streams, workerConsumerName } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CANCEL_RESEND_BACKOFF } from "../../manager/src/execution/sweeper.ts";
import { TestManager } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";
import { subscribeEvents } from "../harness/sse.ts";
import { completeLease } from "./completion.ts";

const DISPATCH_TIMEOUT_MS = 3000;

let s3: S3Server;
let manager: TestManager;
let nc: NatsConnection;
let worker: ProtocolWorker;
let projectId: string;
let names: ReturnType<typeof streams>;

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  manager = await TestManager.start({
    storage: s3.settings,
    heartbeatIntervalMs: 300,
    lostAfterMs: 15_000,
    dispatchTimeoutMs: DISPATCH_TIMEOUT_MS,
  });
  ({ projectId } = await manager.createProject());
  nc = await connect({ servers: manager.natsUrl });
  worker = await ProtocolWorker.start(manager, { heartbeatMs: 200 });
  names = streams(manager.subjectPrefix);
}, 30_000);

afterAll(async () => {
  await worker?.stop();
  await nc?.close();
  await manager?.close();
  await s3?.stop();
});

const submit = () => manager.submitJob(sampleSubmission(projectId));

/** Deletes the Worker's consumer: commands sent from now on stay in the stream, undelivered. */
async function holdCommands(): Promise<void> {
  await (await jetstreamManager(nc)).consumers.delete(
    names.commands.name,
    workerConsumerName(worker.workerId),
  );
}

/** Waits until the command the test expects is committed and stored in the stream. */
async function untilPublished(type: "lease" | "cancel", attemptId: string): Promise<void> {
  await waitFor(`the ${type} of ${attemptId} published`, async () => {
    const [row] = await manager.sql<{ published: boolean }[]>`
      select bool_and(published_at is not null) as published from outbox
      where kind = 'worker.command' and payload->>'type' = ${type} and payload->>'attemptId' = ${attemptId}`;
    return row?.published === true;
  });
}

async function cancelsSent(attemptId: string): Promise<number> {
  const [row] = await manager.sql<{ count: number }[]>`
    select count(*)::int as count from outbox
    where kind = 'worker.command' and payload->>'type' = 'cancel' and payload->>'attemptId' = ${attemptId}`;
  return row?.count ?? 0;
}

const consumersCreated = () => manager.manager.commandConsumers.counters.consumersCreated;

describe("COMMANDS deleted", () => {
  it("between a cancel request and its delivery: the cancel is sent again, the Worker confirms, CANCELLED", async () => {
    const jobId = await submit();
    const lease = await worker.nextLease(jobId);
    await worker.report("accepted", lease);
    await manager.untilJob(jobId, "RUNNING", { pollMs: 25 });
    await holdCommands();
    const created = consumersCreated();
    const resent = manager.manager.execution.sweeper.counters.cancelsResent;

    const requestedAt = Date.now();
    const response = await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
    expect((await response.json()).state).toBe("CANCEL_REQUESTED");
    await untilPublished("cancel", lease.attemptId);
    await (await jetstreamManager(nc)).streams.delete(names.commands.name);

    const cancel = await worker.nextCommand("cancel", lease.attemptId);
    expect(Date.now() - requestedAt).toBeGreaterThanOrEqual(CANCEL_RESEND_BACKOFF.initialMs);
    await worker.report("cancelled", lease);
    const done = await manager.untilJob(jobId, "CANCELLED", { pollMs: 25 });

    expect(cancel).toMatchObject({ attemptId: lease.attemptId, fencingToken: lease.fencingToken });
    expect(done.attempts.map((a: { state: string }) => a.state)).toEqual(["CANCELLED"]);
    // The first cancel went with the stream; the second one reached the Worker.
    expect(await cancelsSent(lease.attemptId)).toBe(2);
    expect(manager.manager.execution.sweeper.counters.cancelsResent).toBe(resent + 1);
    expect(
      worker.commands.filter((c) => c.type === "cancel" && c.attemptId === lease.attemptId),
    ).toHaveLength(1);
    // Re-created, on the stream the relay re-created; a keeper tick racing that re-creation may
    // make it twice (creating is idempotent), never not at all.
    expect(consumersCreated()).toBeGreaterThanOrEqual(created + 1);
  });

  it("with a lease in flight: the attempt fails DISPATCH_TIMEOUT and the next one completes", async () => {
    await holdCommands();
    const created = consumersCreated();
    const jobId = await submit();
    const lost = (await manager.job(jobId)).currentAttemptId as string;
    await untilPublished("lease", lost);
    await (await jetstreamManager(nc)).streams.delete(names.commands.name);

    const next = await worker.nextLease(jobId, 2);
    await worker.report("accepted", next);
    await completeLease(worker, next, s3.client());
    const done = await manager.untilJob(jobId, "COMPLETED", { pollMs: 25 });

    expect(
      done.attempts.map((a: { id: string; state: string; failureCode: string | null }) => [
        a.id,
        a.state,
        a.failureCode,
      ]),
    ).toEqual([
      [lost, "FAILED", "DISPATCH_TIMEOUT"],
      [next.attemptId, "SUCCEEDED", null],
    ]);
    expect(
      worker
        .leases()
        .filter((l) => l.jobId === jobId)
        .map((l) => l.attemptId),
    ).toEqual([next.attemptId]);
    expect(consumersCreated()).toBe(created + 1);
  });
});

describe("REPORTS deleted", () => {
  it("the Manager's reports consumer is created again and later reports are applied", async () => {
    const jobId = await submit();
    const lease = await worker.nextLease(jobId);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(names.reports.name);

    await waitFor(
      "the reports stream and the Manager's consumer again",
      async () => {
        try {
          await jsm.consumers.info(names.reports.name, MANAGER_REPORTS_CONSUMER);
          return true;
        } catch {
          return false;
        }
      },
      10_000,
      50,
    );
    await worker.report("accepted", lease);
    await manager.untilJob(jobId, "RUNNING", { pollMs: 25 });
    await completeLease(worker, lease, s3.client());
    const done = await manager.untilJob(jobId, "COMPLETED", { pollMs: 25 });
    expect(done.attempts.map((a: { id: string; state: string }) => [a.id, a.state])).toEqual([
      [lease.attemptId, "SUCCEEDED"],
    ]);
  });
});

describe("EVENTS deleted", () => {
  it("with nobody subscribed: the relay creates it again and the outbox drains", async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(names.events.name);
    const jobId = await submit();
    const lease = await worker.nextLease(jobId);
    await worker.report("accepted", lease);
    await completeLease(worker, lease, s3.client());
    await manager.untilJob(jobId, "COMPLETED", { pollMs: 25 });
    // Not only commands: a batch holding events would otherwise fail, roll back and be sent
    // again forever (stored twice once the duplicate window has passed).
    await waitFor("every outbox row published", async () => {
      const [row] = await manager.sql<{ count: number }[]>`
        select count(*)::int as count from outbox where published_at is null`;
      return row?.count === 0;
    });
    const { state } = await jsm.streams.info(names.events.name);
    const kinds: string[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const event = (await jsm.streams.getMessage(names.events.name, { seq }))?.json<{
        kind: string;
        data: { jobId?: string };
      }>();
      if (event?.data.jobId === jobId) kinds.push(event.kind);
    }
    expect(kinds[0]).toBe("job.created");
  });

  it("SSE subscribers get the events published after it", async () => {
    const subscriber = await subscribeEvents(manager, "?kinds=job.created");
    try {
      await (await jetstreamManager(nc)).streams.delete(names.events.name);
      // At once: the relay's publish finds no stream, creates it again and publishes; the hub,
      // following the new stream from its start, still hands the event on.
      const first = await submit();
      await waitFor("the first job.created", async () => subscriber.events().length >= 1, 10_000, 50);
      const second = await submit();
      await waitFor("the second job.created", async () => subscriber.events().length >= 2, 10_000, 50);
      expect(
        subscriber.events().map((event) => [event.event, JSON.parse(event.data ?? "").data.jobId]),
      ).toEqual([
        ["job.created", first],
        ["job.created", second],
      ]);
    } finally {
      await subscriber.close();
    }
  });
});
