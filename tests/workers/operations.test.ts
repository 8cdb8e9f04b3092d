import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { waitFor } from "@tjm/devstack/services";
import {
  CommandEnvelopeSchema,
  decodeMessage,
  PROTOCOL_VERSION,
  streams,
  workerConsumerName,
} from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";
import { subscribeEvents } from "../harness/sse.ts";
import { challenge, credentialsBody, enroll, postJson } from "../harness/workers.ts";

let manager: TestManager;
let nc: NatsConnection;

beforeAll(async () => {
  manager = await TestManager.start();
  nc = await connect({ servers: manager.natsUrl });
});
afterAll(async () => {
  await nc?.close();
  await manager?.close();
});

const get = async (path: string) => {
  const response = await manager.request(path);
  return { status: response.status, body: await response.json() };
};

/** Every command waiting on the Worker's durable consumer, acked as read. */
async function pullCommands(workerId: string) {
  const consumer = await jetstream(nc).consumers.get(
    streams(manager.subjectPrefix).commands.name,
    workerConsumerName(workerId),
  );
  const batch = await consumer.fetch({ max_messages: 10, expires: 1000 });
  const commands = [];
  for await (const message of batch) {
    const decoded = decodeMessage(CommandEnvelopeSchema, message.data);
    if (!decoded.ok) throw new Error(decoded.reason);
    commands.push(decoded.value.data);
    message.ack();
  }
  return commands;
}

describe("operator Worker routes", () => {
  it("list with filters and the pagination envelope", async () => {
    const cpu = await enroll(manager, { name: "list-cpu" });
    const amd = await enroll(manager, {
      name: "list-amd",
      pool: "amd",
      probe: {
        ffmpegVersion: "7.1",
        capabilities: ["libx264", "aac"],
        hardwareEncoders: [{ name: "h264_amf", status: "FAILED", reason: "no AMF runtime" }],
        certification: { status: "DEGRADED", reasons: ["h264_amf failed its self-test: no AMF runtime"] },
        capacity: 2,
      },
    });
    await manager.request(`/api/v1/operations/workers/${cpu.workerId}/drain`, { method: "POST" });

    const all = await get("/api/v1/operations/workers?limit=100");
    expect(all.body).toMatchObject({ limit: 100, offset: 0 });
    const ids = all.body.items.map((worker: { workerId: string }) => worker.workerId);
    // Newest registration first.
    expect(ids.indexOf(amd.workerId)).toBeLessThan(ids.indexOf(cpu.workerId));
    expect(all.body.total).toBe(all.body.items.length);

    const byPool = await get("/api/v1/operations/workers?pool=amd");
    expect(byPool.body.items.map((w: { workerId: string }) => w.workerId)).toContain(amd.workerId);
    expect(byPool.body.items.every((w: { pool: string }) => w.pool === "amd")).toBe(true);

    const degraded = await get("/api/v1/operations/workers?certification=DEGRADED");
    expect(degraded.body.items.map((w: { workerId: string }) => w.workerId)).toEqual([amd.workerId]);
    expect(degraded.body.items[0].certification).toEqual({
      status: "DEGRADED",
      reasons: ["h264_amf failed its self-test: no AMF runtime"],
    });

    const draining = await get("/api/v1/operations/workers?draining=true");
    expect(draining.body.items.map((w: { workerId: string }) => w.workerId)).toEqual([cpu.workerId]);
    const notDraining = await get("/api/v1/operations/workers?draining=false");
    expect(notDraining.body.items.map((w: { workerId: string }) => w.workerId)).not.toContain(cpu.workerId);

    const online = await get("/api/v1/operations/workers?connectivity=ONLINE&limit=1&offset=1");
    expect(online.body).toMatchObject({ limit: 1, offset: 1 });
    expect(online.body.items).toHaveLength(1);
    expect(online.body.total).toBeGreaterThanOrEqual(2);
    expect((await get("/api/v1/operations/workers?connectivity=OFFLINE")).body.total).toBe(0);
  });

  it.each([
    ["connectivity=online", ["connectivity"]],
    ["pool=tpu&certification=GOOD", ["certification", "pool"]],
    ["draining=yes", ["draining"]],
    ["limit=0&offset=-1", ["limit", "offset"]],
    ["limit=101&offset=100001", ["limit", "offset"]],
  ])("list refuses %s with 400 at each parameter", async (query, paths) => {
    const { status, body } = await get(`/api/v1/operations/workers?${query}`);
    expect(status).toBe(400);
    expect(body.details.map((detail: { path: string }) => detail.path).sort()).toEqual(paths);
  });

  it("get, drain, undrain and disable answer 400 for a malformed id and 404 for an unknown one", async () => {
    for (const [method, suffix] of [
      ["GET", ""],
      ["POST", "/drain"],
      ["POST", "/undrain"],
      ["POST", "/disable"],
    ] as const) {
      const malformed = await manager.request(`/api/v1/operations/workers/not-a-uuid${suffix}`, { method });
      expect(malformed.status).toBe(400);
      expect((await malformed.json()).details).toEqual([
        { path: "workerId", message: "must be a UUID", code: "validation.invalid_format" },
      ]);
      const unknownId = crypto.randomUUID();
      const unknown = await manager.request(`/api/v1/operations/workers/${unknownId}${suffix}`, { method });
      expect(unknown.status).toBe(404);
      expect((await unknown.json()).message).toContain(unknownId);
    }
  });

  it("need an operator token", async () => {
    const worker = await enroll(manager);
    const routes: [string, string][] = [
      ["GET", "/api/v1/operations/workers"],
      ["GET", `/api/v1/operations/workers/${worker.workerId}`],
      ["POST", `/api/v1/operations/workers/${worker.workerId}/drain`],
      ["POST", `/api/v1/operations/workers/${worker.workerId}/undrain`],
      ["POST", `/api/v1/operations/workers/${worker.workerId}/disable`],
    ];
    for (const [method, path] of routes) {
      expect((await fetch(`${manager.baseUrl}${path}`, { method })).status).toBe(401);
      const wrongAudience = await manager.request(path, {
        method,
        headers: { authorization: `Bearer ${await manager.issuer.token({ audience: "account-portal" })}` },
      });
      expect(wrongAudience.status).toBe(403);
    }
    expect((await get(`/api/v1/operations/workers/${worker.workerId}`)).body.conditions).toEqual([]);
  });

  it("drain: 202 with DRAINING (and DRAINED at once when it holds nothing), idempotent, one drain command", async () => {
    const worker = await enroll(manager);
    const first = await manager.request(`/api/v1/operations/workers/${worker.workerId}/drain`, {
      method: "POST",
    });
    expect(first.status).toBe(202);
    const drained = await first.json();
    expect(drained.conditions).toEqual([
      { type: "DRAINING", since: expect.any(String) },
      { type: "DRAINED", since: expect.any(String) },
    ]);
    const second = await manager.request(`/api/v1/operations/workers/${worker.workerId}/drain`, {
      method: "POST",
    });
    expect(second.status).toBe(202);
    expect((await second.json()).conditions).toEqual(drained.conditions);

    let commands: unknown[] = [];
    await waitFor("the drain command", async () => {
      commands.push(...(await pullCommands(worker.workerId)));
      return commands.length > 0;
    });
    commands = [...commands, ...(await pullCommands(worker.workerId))];
    expect(commands).toEqual([{ type: "drain", protocolVersion: PROTOCOL_VERSION }]);
  });

  it("undrain: only a draining or drained Worker, which takes leases again; 409 otherwise", async () => {
    const worker = await enroll(manager);
    const undrain = () =>
      manager.request(`/api/v1/operations/workers/${worker.workerId}/undrain`, { method: "POST" });
    const notDraining = await undrain();
    expect(notDraining.status).toBe(409);
    expect(await notDraining.json()).toMatchObject({
      statusCode: 409,
      message: `Worker ${worker.workerId} is not draining`,
    });

    // Drained at once (it holds nothing), then undrained: both conditions end.
    await manager.request(`/api/v1/operations/workers/${worker.workerId}/drain`, { method: "POST" });
    const first = await undrain();
    expect(first.status).toBe(202);
    expect((await first.json()).conditions).toEqual([]);
    expect((await undrain()).status).toBe(409);
    const listed = await get(`/api/v1/operations/workers?draining=true&limit=100`);
    expect(listed.body.items.map((w: { workerId: string }) => w.workerId)).not.toContain(worker.workerId);

    // Draining again works after an undrain.
    const again = await manager.request(`/api/v1/operations/workers/${worker.workerId}/drain`, {
      method: "POST",
    });
    expect((await again.json()).conditions.map((c: { type: string }) => c.type)).toEqual([
      "DRAINING",
      "DRAINED",
    ]);

    const commands: unknown[] = [];
    await waitFor("the drain, undrain and drain commands", async () => {
      commands.push(...(await pullCommands(worker.workerId)));
      return commands.length >= 3;
    });
    expect(commands).toEqual([
      { type: "drain", protocolVersion: PROTOCOL_VERSION },
      { type: "undrain", protocolVersion: PROTOCOL_VERSION },
      { type: "drain", protocolVersion: PROTOCOL_VERSION },
    ]);

    // A disabled Worker stays out, drained or not.
    await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, { method: "POST" });
    const disabled = await undrain();
    expect(disabled.status).toBe(409);
    expect((await disabled.json()).message).toBe(
      `Worker ${worker.workerId} is disabled and cannot be undrained`,
    );
  });

  it("an undrained Worker is leased jobs again", async () => {
    const { projectId } = await manager.createProject();
    // The only intel Worker here: no other one can take the job.
    const worker = await ProtocolWorker.start(manager, {
      overrides: {
        pool: "intel",
        probe: {
          ffmpegVersion: "7.1",
          capabilities: ["h264_qsv", "aac"],
          hardwareEncoders: [{ name: "h264_qsv", status: "PASSED" }],
          certification: { status: "READY", reasons: [] },
          capacity: 2,
        },
      },
    });
    try {
      await manager.request(`/api/v1/operations/workers/${worker.workerId}/drain`, { method: "POST" });
      const jobId = await manager.submitJob(
        sampleSubmission(projectId, { requirements: { requiredCapabilities: ["h264_qsv"] } }),
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(worker.leases()).toEqual([]);
      expect((await manager.job(jobId)).state).toBe("QUEUED");
      await manager.request(`/api/v1/operations/workers/${worker.workerId}/undrain`, { method: "POST" });
      expect((await worker.nextLease(jobId)).jobId).toBe(jobId);
      expect(worker.commands.map((command) => command.type)).toEqual(["drain", "undrain", "lease"]);
    } finally {
      await worker.stop();
    }
  });

  it("disable: 202 DISABLED; the Worker loses its consumer and cannot re-register or refresh credentials", async () => {
    const worker = await enroll(manager);
    const response = await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, {
      method: "POST",
    });
    expect(response.status).toBe(202);
    expect((await response.json()).conditions).toEqual([{ type: "DISABLED", since: expect.any(String) }]);
    await expect(pullCommands(worker.workerId)).rejects.toThrow(/consumer not found/i);

    for (const purpose of ["re-registration", "credentials"] as const) {
      const refused = await postJson(manager, "/api/v1/worker/challenges", {
        protocolVersion: PROTOCOL_VERSION,
        workerId: worker.workerId,
        purpose,
      });
      expect(refused.status).toBe(403);
      expect((await refused.json()).message).toContain("was disabled by an operator");
    }
    const again = await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, {
      method: "POST",
    });
    expect(again.status).toBe(202);
  });

  it("a challenge issued before disabling cannot be answered after it", async () => {
    const worker = await enroll(manager);
    const issued = await challenge(manager, worker.workerId, "credentials");
    await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, { method: "POST" });
    const refused = await postJson(manager, "/api/v1/worker/credentials", credentialsBody(worker, issued));
    expect(refused.status).toBe(403);
  });
});

describe("events", () => {
  it("a subscriber sees a job submitted and cancelled, then a Worker registered, drained and disabled, in order", async () => {
    const { projectId } = await manager.createProject();
    const stream = await subscribeEvents(manager);
    try {
      const submitted = await manager.request("/api/v1/operations/jobs", {
        method: "POST",
        json: sampleSubmission(projectId),
      });
      const jobId = (await submitted.json()).id;
      await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
      const worker = await enroll(manager, { name: "evented" });
      await manager.request(`/api/v1/operations/workers/${worker.workerId}/drain`, { method: "POST" });
      await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, { method: "POST" });
      // Only this test's job and Worker: the Workers of the tests before it (stopped, going
      // offline) share the Manager and may announce changes meanwhile; and not the connectivity
      // of this one, which sends no heartbeat and turns SUSPECTED when the steps take long.
      const ours = () =>
        stream
          .events()
          .map((event) => ({ event: event.event, ...JSON.parse(event.data ?? "{}") }))
          .filter((event) => event.data?.jobId === jobId || event.data?.workerId === worker.workerId)
          .filter((event) => event.data?.change !== "connectivity");
      await waitFor("six events", async () => ours().length >= 6);
      const events = ours();
      expect(events.map((event) => event.event)).toEqual([
        "job.created",
        "job.updated",
        "worker.registered",
        "worker.updated",
        "worker.updated",
        "worker.updated",
      ]);
      expect(new Set(events.map((event) => event.id)).size).toBe(6);
      expect(events[2].data).toEqual({
        workerId: worker.workerId,
        instanceId: worker.instanceId,
        name: "evented",
        pool: "cpu",
        certification: "READY",
        connectivity: "ONLINE",
      });
      expect(events[3].data).toMatchObject({ workerId: worker.workerId, change: "drain" });
      // It held nothing, so it is drained at once.
      expect(events[4].data).toMatchObject({ workerId: worker.workerId, change: "drained" });
      expect(events[5].data).toMatchObject({ workerId: worker.workerId, change: "disable" });
    } finally {
      await stream.close();
    }
  });
});
