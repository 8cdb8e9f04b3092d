/**
 * Bad input on every subject a Manager reads: Worker reports (JetStream), heartbeats and
 * progress (core NATS) and the events stream the SSE hub follows. For each subject, each kind
 * of bad message — bytes that are not UTF-8, JSON cut short, valid JSON of the wrong shape
 * (the good message wrapped in an array), and an otherwise good message padded past
 * MAX_MESSAGE_BYTES — is published, then a good message right after: the bad one is dropped
 * and counted, the good one is processed, so the reader is alive and went on.
 *
 * Covered elsewhere and not repeated: tests/execution/leases.test.ts (reports that are not
 * JSON, of the wrong schema, of unknown attempts, old instances, other Workers) and
 * tests/workers/heartbeats.test.ts (heartbeats that are not JSON, of the wrong schema, over
 * the size limit, naming another or an unknown Worker, replayed).
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { waitFor } from "@tjm/devstack/services";
import {
  encodeMessage,
  type Heartbeat,
  HeartbeatSchema,
  type LeaseCommand,
  MANAGER_REPORTS_CONSUMER,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  type Progress,
  ProgressSchema,
  type Report,
  ReportSchema,
  streams,
  subjects,
} from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";
import { subscribeEvents } from "../harness/sse.ts";
import { type EnrolledWorker, enroll } from "../harness/workers.ts";

const encoder = new TextEncoder();
const json = (value: unknown) => encoder.encode(JSON.stringify(value));

/** Each kind of bad message, made from the good message of the subject under test. */
const BAD_MESSAGES: [string, (good: object) => Uint8Array][] = [
  ["bytes that are not UTF-8", () => Uint8Array.from([0xff, 0xfe, 0x7b, 0xc3, 0x28, 0x80])],
  [
    "JSON cut short",
    (good) => {
      const whole = json(good);
      return whole.subarray(0, Math.floor(whole.byteLength / 2));
    },
  ],
  ["valid JSON of the wrong shape", (good) => json([good])],
  [
    "a good message padded past MAX_MESSAGE_BYTES",
    (good) => json({ ...good, padding: "x".repeat(MAX_MESSAGE_BYTES) }),
  ],
];

let manager: TestManager;
let nc: NatsConnection;
let worker: ProtocolWorker;
let projectId: string;

beforeAll(async () => {
  manager = await TestManager.start({ heartbeatIntervalMs: 500, lostAfterMs: 10_000 });
  ({ projectId } = await manager.createProject());
  nc = await connect({ servers: manager.natsUrl });
  worker = await ProtocolWorker.start(manager, { heartbeatMs: 200 });
});

afterAll(async () => {
  await worker?.stop();
  await nc?.close();
  await manager?.close();
});

/** A job leased to the protocol Worker (not yet accepted). */
async function leasedJob(): Promise<{ jobId: string; lease: LeaseCommand }> {
  const jobId = await manager.submitJob(sampleSubmission(projectId));
  return { jobId, lease: await worker.nextLease(jobId) };
}

function report(type: "accepted" | "cancelled", lease: LeaseCommand): Report {
  return {
    type,
    protocolVersion: PROTOCOL_VERSION,
    workerId: worker.workerId,
    instanceId: worker.worker.instanceId,
    attemptId: lease.attemptId,
    fencingToken: lease.fencingToken,
    sentAt: new Date().toISOString(),
  };
}

describe("reports (JetStream, the Manager's shared durable consumer)", () => {
  const counters = () => manager.manager.execution.reports.counters;

  it.each(BAD_MESSAGES)("%s is terminated and counted; the next report is applied", async (_, bad) => {
    const { jobId, lease } = await leasedJob();
    const accepted = report("accepted", lease);
    const subject = subjects.workerReports(manager.subjectPrefix, worker.workerId);
    const before = { ...counters() };
    const js = jetstream(nc);
    await js.publish(subject, bad(accepted));
    await js.publish(subject, encodeMessage(ReportSchema, accepted));

    await manager.untilJob(jobId, "RUNNING", { pollMs: 25 });
    expect(counters().invalid).toBe(before.invalid + 1);
    expect(counters().applied).toBe(before.applied + 1);
    // Nothing left to redeliver: the bad report was terminated, not left to come back.
    const jsm = await jetstreamManager(nc);
    const reportsStream = streams(manager.subjectPrefix).reports.name;
    await waitFor("the consumer to settle", async () => {
      const info = await jsm.consumers.info(reportsStream, MANAGER_REPORTS_CONSUMER);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    });
    expect((await jsm.consumers.info(reportsStream, MANAGER_REPORTS_CONSUMER)).num_redelivered).toBe(0);

    // The job is the Worker's: it lets go of it, and the slot is free for the next case.
    await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
    await js.publish(subject, encodeMessage(ReportSchema, report("cancelled", lease)));
    await manager.untilJob(jobId, "CANCELLED", { pollMs: 25 });
  });
});

describe("heartbeats (core NATS)", () => {
  let enrolled: EnrolledWorker;
  let sentAt = Date.now();
  const monitor = () => manager.manager.monitor;

  beforeAll(async () => {
    enrolled = await enroll(manager);
    // It only heartbeats: drained, it is never handed the other cases' leases.
    await manager.request(`/api/v1/operations/workers/${enrolled.workerId}/drain`, { method: "POST" });
  });

  /** The Worker's heartbeat, saying it has `freeCapacity` slots: what shows it was accepted. */
  const heartbeat = (freeCapacity: number): Heartbeat => ({
    protocolVersion: PROTOCOL_VERSION,
    workerId: enrolled.workerId,
    instanceId: enrolled.instanceId,
    sentAt: new Date(++sentAt).toISOString(),
    activeAttempts: [],
    freeCapacity,
  });

  it.each(BAD_MESSAGES.map(([what, bad], index) => [what, bad, index + 1] as const))(
    "%s is dropped and counted; the next heartbeat is accepted",
    async (_, bad, freeCapacity) => {
      const subject = subjects.workerHeartbeat(manager.subjectPrefix, enrolled.workerId);
      const invalid = monitor().counters.rejected.invalid ?? 0;
      const good = heartbeat(freeCapacity);
      nc.publish(subject, bad(good));
      nc.publish(subject, encodeMessage(HeartbeatSchema, good));

      await waitFor(
        "the good heartbeat",
        async () => monitor().live(enrolled.workerId)?.freeCapacity === freeCapacity,
        5000,
        10,
      );
      expect(monitor().counters.rejected.invalid).toBe(invalid + 1);
    },
  );
});

describe("progress (core NATS)", () => {
  let lease: LeaseCommand;
  let at = Date.now();
  const tracker = () => manager.manager.execution.progress;

  beforeAll(async () => {
    const leased = await leasedJob();
    lease = leased.lease;
    await worker.report("accepted", lease);
    await manager.untilJob(leased.jobId, "RUNNING", { pollMs: 25 });
  });

  const progress = (percent: number): Progress => ({
    protocolVersion: PROTOCOL_VERSION,
    workerId: worker.workerId,
    instanceId: worker.worker.instanceId,
    attemptId: lease.attemptId,
    fencingToken: lease.fencingToken,
    percent,
    fps: 30,
    bitrateKbps: 900,
    speed: 1.5,
    etaSeconds: 12,
    outTimeMs: 100 * percent,
    at: new Date(++at).toISOString(),
  });

  it.each(BAD_MESSAGES.map(([what, bad], index) => [what, bad, 10 * (index + 1)] as const))(
    "%s is dropped and counted; the next update is live",
    async (_, bad, percent) => {
      const subject = subjects.workerProgress(manager.subjectPrefix, worker.workerId);
      const invalid = tracker().counters.rejected.invalid ?? 0;
      const accepted = tracker().counters.accepted;
      const good = progress(percent);
      nc.publish(subject, bad(good));
      nc.publish(subject, encodeMessage(ProgressSchema, good));

      await waitFor("the good update", async () => tracker().percent(lease.attemptId) === percent, 5000, 10);
      expect(tracker().counters.rejected.invalid).toBe(invalid + 1);
      expect(tracker().counters.accepted).toBe(accepted + 1);
    },
  );
});

describe("events (JetStream, the SSE hub's ordered consumer)", () => {
  const hub = () => manager.manager.events;

  it.each(BAD_MESSAGES)("%s is skipped and counted; subscribers get the next event", async (_, bad) => {
    const jobId = crypto.randomUUID();
    const stream = await subscribeEvents(manager, `?jobId=${jobId}`);
    try {
      const good = {
        id: crypto.randomUUID(),
        kind: "job.updated",
        occurredAt: new Date().toISOString(),
        data: { jobId, from: "QUEUED", to: "CANCELLED" },
      };
      const before = { ...hub().counters };
      const js = jetstream(nc);
      const subject = subjects.event(manager.subjectPrefix, "job.updated");
      await js.publish(subject, bad(good));
      await js.publish(subject, json(good));

      await waitFor("the good event", async () => stream.events().length > 0, 5000, 10);
      expect(hub().counters.invalid).toBe(before.invalid + 1);
      // Only the good one, once: the hub neither passed the bad one on nor started over.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(stream.events().map((event) => [event.id, event.event, JSON.parse(event.data ?? "")])).toEqual([
        [good.id, "job.updated", good],
      ]);
    } finally {
      await stream.close();
    }
  });
});
