import { connect, type NatsConnection } from "@nats-io/transport-node";
import { waitFor } from "@tjm/devstack/services";
import { encodeMessage, HeartbeatSchema, PROTOCOL_VERSION, subjects } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { enroll, heartbeat, postJson, reRegistrationBody } from "../harness/workers.ts";
import { getWorker } from "../harness/workers-api.ts";

const INTERVAL_MS = 200;
const LOST_AFTER_MS = 1000;

let manager: TestManager;
let nc: NatsConnection;

beforeAll(async () => {
  manager = await TestManager.start({ heartbeatIntervalMs: INTERVAL_MS, lostAfterMs: LOST_AFTER_MS });
  nc = await connect({ servers: manager.natsUrl });
});
afterAll(async () => {
  await nc?.close();
  await manager?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Heartbeats every interval until the returned function is called, which tells when the last one left. */
function keepBeating(
  target: NatsConnection,
  worker: { workerId: string; instanceId: string },
  freeCapacity = 4,
) {
  let lastSentAt = Date.now();
  const beat = () => {
    heartbeat(target, manager.subjectPrefix, worker, freeCapacity);
    lastSentAt = Date.now();
  };
  beat();
  const timer = setInterval(beat, INTERVAL_MS);
  return () => {
    clearInterval(timer);
    return lastSentAt;
  };
}

async function connectivityEvents(sql: TestManager["sql"], workerId: string) {
  return sql<{ from: string; to: string }[]>`
    select payload->>'from' as from, payload->>'to' as to from outbox
    where kind = 'worker.updated' and payload->>'workerId' = ${workerId} and payload->>'change' = 'connectivity'
    order by id`;
}

describe("connectivity from heartbeats", () => {
  it("ONLINE while heartbeating, SUSPECTED after two missed intervals, OFFLINE after the lost delay, ONLINE again", async () => {
    const worker = await enroll(manager);
    const stop = keepBeating(nc, worker, 3);
    await waitFor("a heartbeat", async () => (await getWorker(manager, worker.workerId)).freeCapacity === 3);
    const live = await getWorker(manager, worker.workerId);
    expect(live).toMatchObject({ connectivity: "ONLINE", activeAttempts: [], freeCapacity: 3 });
    expect(Date.now() - Date.parse(live.lastHeartbeatAt as string)).toBeLessThan(2000);
    await sleep(3 * INTERVAL_MS);
    expect((await getWorker(manager, worker.workerId)).connectivity).toBe("ONLINE");

    // Silence counts from the last heartbeat sent.
    const stoppedAt = stop();
    await waitFor(
      "SUSPECTED",
      async () => (await getWorker(manager, worker.workerId)).connectivity === "SUSPECTED",
      5000,
      20,
    );
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(2 * INTERVAL_MS - 50);
    await waitFor(
      "OFFLINE",
      async () => (await getWorker(manager, worker.workerId)).connectivity === "OFFLINE",
      5000,
      20,
    );
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(LOST_AFTER_MS - 50);
    expect(Date.now() - stoppedAt).toBeLessThan(LOST_AFTER_MS + 1500);

    const resume = keepBeating(nc, worker);
    await waitFor(
      "ONLINE again",
      async () => (await getWorker(manager, worker.workerId)).connectivity === "ONLINE",
    );
    resume();
    expect(await connectivityEvents(manager.sql, worker.workerId)).toEqual([
      { from: "ONLINE", to: "SUSPECTED" },
      { from: "SUSPECTED", to: "OFFLINE" },
      { from: "OFFLINE", to: "ONLINE" },
    ]);
  });

  it("ignores the heartbeats of an old instance after a re-registration", async () => {
    const worker = await enroll(manager);
    const response = await postJson(
      manager,
      "/api/v1/worker/re-registrations",
      await reRegistrationBody(manager, worker),
    );
    const current = await response.json();
    const staleBefore = manager.manager.monitor.counters.rejected["stale-instance"] ?? 0;
    // Only the old instance keeps beating: the Worker must still go SUSPECTED.
    const stop = keepBeating(nc, worker);
    try {
      await waitFor(
        "SUSPECTED",
        async () => (await getWorker(manager, worker.workerId)).connectivity === "SUSPECTED",
        5000,
        20,
      );
      expect(manager.manager.monitor.counters.rejected["stale-instance"] ?? 0).toBeGreaterThan(staleBefore);
      expect((await getWorker(manager, worker.workerId)).instanceId).toBe(current.instanceId);
    } finally {
      stop();
    }
  });
});

describe("bad heartbeats are dropped, counted and change nothing", () => {
  it.each<[string, (worker: { workerId: string; instanceId: string }) => [string, Uint8Array], string]>([
    [
      "not JSON",
      (w) => [subjects.workerHeartbeat(manager.subjectPrefix, w.workerId), new TextEncoder().encode("{")],
      "invalid",
    ],
    [
      "the wrong schema",
      (w) => [
        subjects.workerHeartbeat(manager.subjectPrefix, w.workerId),
        new TextEncoder().encode(JSON.stringify({ ...w, freeCapacity: -1 })),
      ],
      "invalid",
    ],
    [
      "over the size limit",
      (w) => [
        subjects.workerHeartbeat(manager.subjectPrefix, w.workerId),
        new Uint8Array(600 * 1024).fill(32),
      ],
      "invalid",
    ],
    [
      "another Worker's id in the body",
      (w) => [
        subjects.workerHeartbeat(manager.subjectPrefix, crypto.randomUUID()),
        encodeMessage(HeartbeatSchema, {
          protocolVersion: PROTOCOL_VERSION,
          ...w,
          sentAt: new Date().toISOString(),
          activeAttempts: [],
          freeCapacity: 1,
        }),
      ],
      "subject-mismatch",
    ],
    [
      "an unknown Worker",
      () => {
        const workerId = crypto.randomUUID();
        return [
          subjects.workerHeartbeat(manager.subjectPrefix, workerId),
          encodeMessage(HeartbeatSchema, {
            protocolVersion: PROTOCOL_VERSION,
            workerId,
            instanceId: crypto.randomUUID(),
            sentAt: new Date().toISOString(),
            activeAttempts: [],
            freeCapacity: 1,
          }),
        ];
      },
      "unknown-worker",
    ],
  ])("%s", async (_, message, reason) => {
    const worker = await enroll(manager);
    const before = await getWorker(manager, worker.workerId);
    const counted = manager.manager.monitor.counters.rejected[reason as "invalid"] ?? 0;
    const [subject, data] = message(worker);
    nc.publish(subject, data);
    await waitFor(
      `the ${reason} counter`,
      async () => (manager.manager.monitor.counters.rejected[reason as "invalid"] ?? 0) > counted,
    );
    const after = await getWorker(manager, worker.workerId);
    expect(after).toEqual(before);
  });

  it("a replayed heartbeat (not newer than the last) is dropped", async () => {
    const worker = await enroll(manager);
    const sentAt = new Date().toISOString();
    const data = encodeMessage(HeartbeatSchema, {
      protocolVersion: PROTOCOL_VERSION,
      ...worker,
      sentAt,
      activeAttempts: [],
      freeCapacity: 2,
    });
    const subject = subjects.workerHeartbeat(manager.subjectPrefix, worker.workerId);
    const replayedBefore = manager.manager.monitor.counters.rejected.replayed ?? 0;
    nc.publish(subject, data);
    await waitFor(
      "the heartbeat",
      async () => (await getWorker(manager, worker.workerId)).freeCapacity === 2,
    );
    nc.publish(subject, data);
    await waitFor(
      "the replay counted",
      async () => (manager.manager.monitor.counters.rejected.replayed ?? 0) > replayedBefore,
    );
  });
});

describe("two Manager replicas", () => {
  it("both follow the heartbeats; each transition is recorded once", async () => {
    const replica = await TestManager.start({
      schema: manager.schema,
      heartbeatIntervalMs: INTERVAL_MS,
      lostAfterMs: LOST_AFTER_MS,
    });
    try {
      const worker = await enroll(manager);
      const stop = keepBeating(nc, worker, 2);
      await waitFor("both replicas hear it", async () => {
        const a = await getWorker(manager, worker.workerId);
        const b = await getWorker(replica, worker.workerId);
        return a.freeCapacity === 2 && b.freeCapacity === 2;
      });
      stop();
      await waitFor(
        "OFFLINE",
        async () => (await getWorker(manager, worker.workerId)).connectivity === "OFFLINE",
        5000,
        20,
      );
      const resume = keepBeating(nc, worker, 2);
      await waitFor(
        "ONLINE",
        async () => (await getWorker(manager, worker.workerId)).connectivity === "ONLINE",
      );
      // Give the slower replica time to try the same transitions.
      await sleep(3 * INTERVAL_MS);
      resume();
      expect(await connectivityEvents(manager.sql, worker.workerId)).toEqual([
        { from: "ONLINE", to: "SUSPECTED" },
        { from: "SUSPECTED", to: "OFFLINE" },
        { from: "OFFLINE", to: "ONLINE" },
      ]);
    } finally {
      await replica.close();
    }
  });
});
