/**
 * The agent against NATS in operator mode: it connects with the user JWT the Manager issues
 * for its NKey, stays within that JWT's permissions (heartbeats, its own consumer, acks), and
 * refreshes the JWT at half-life so the server never disconnects it at expiry.
 */
import { jetstream } from "@nats-io/jetstream";
import { connect, credsAuthenticator } from "@nats-io/transport-node";
import { agentDirs, killAgents, startAgent } from "@tjm/devstack/agent-process";
import { type OperatorModeNats, startOperatorModeNats } from "@tjm/devstack/nats-operator";
import { CommandEnvelopeSchema, encodeMessage, examples, subjects } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { issueToken } from "../harness/workers.ts";
import { getWorker, isOnline, waitForWorker } from "../harness/workers-api.ts";

/** The Manager's shortest allowed lifetime (WORKER_JWT_TTL_SECONDS ≥ 10): a refresh at ~5 s. */
const JWT_TTL_SECONDS = 10;

/** Real agents and Managers as processes: 20-25 s per test on a slow machine running the suite beside them. */
describe("the Worker agent with NATS in operator mode", { timeout: 60_000 }, () => {
  let nats: OperatorModeNats;
  let manager: TestManager;
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    nats = await startOperatorModeNats();
    manager = await TestManager.start({
      natsUrl: nats.url,
      heartbeatIntervalMs: 200,
      lostAfterMs: 2000,
      natsAuth: {
        managerCredsFile: nats.managerCredsFile,
        accountPublicKey: nats.accountPublicKey,
        accountSigningSeed: nats.accountSigningSeed,
        ttlSeconds: JWT_TTL_SECONDS,
      },
    });
  });
  afterAll(async () => {
    await killAgents();
    await cleanup?.();
    await manager?.close();
    await nats?.stop();
  });

  it("connects with its JWT, acks and terminates commands within its permissions, and outlives its first JWT by refreshing it", async () => {
    const dirs = await agentDirs();
    cleanup = dirs.cleanup;
    const agent = startAgent({
      MANAGER_URL: manager.baseUrl,
      WORKER_STATE_DIR: dirs.stateDir,
      WORKER_WORK_DIR: dirs.workDir,
      FFMPEG_PATH: "/usr/bin/ffmpeg",
      ENROLLMENT_TOKEN: await issueToken(manager),
    });
    const registered = await agent.waitForMessage("worker registered");
    expect(registered).toMatchObject({ natsAuth: "jwt", natsUrl: nats.url });
    const workerId = registered.workerId as string;
    await waitForWorker(manager, workerId, isOnline);

    // The ack needs $JS.ACK permission: a denied one would show as a NATS error status.
    await agent.waitForMessage("consuming commands");
    const drain = await manager.request(`/api/v1/operations/workers/${workerId}/drain`, { method: "POST" });
    expect(drain.status).toBe(202);
    await agent.waitForMessage("draining: this Worker takes no new leases");

    const refreshed = await agent.waitForMessage("NATS credentials refreshed", JWT_TTL_SECONDS * 1000);
    expect(Date.parse(refreshed.expiresAt as string)).toBeGreaterThan(
      Date.parse(registered.userJwtExpiresAt as string),
    );
    await agent.waitForMessage("reconnected to NATS");

    // The consumer survived the reconnect: commands published now still arrive. A cancel of an
    // attempt this Worker does not hold is acked and ignored; bytes that are no command are terminated.
    const publisher = await connect({
      servers: nats.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(nats.managerCreds)),
    });
    try {
      const js = jetstream(publisher);
      const subject = subjects.workerCommands(manager.subjectPrefix, workerId);
      const cancel = {
        id: crypto.randomUUID(),
        kind: "worker.command" as const,
        occurredAt: new Date().toISOString(),
        data: examples.commands.cancel,
      };
      await js.publish(subject, encodeMessage(CommandEnvelopeSchema, cancel), { msgID: cancel.id });
      await js.publish(subject, "not a command");
    } finally {
      await publisher.close();
    }
    await agent.waitForMessage("dropping a command that cannot be read");

    // Past the first JWT's expiry the server would have cut a connection still holding it.
    const firstExpiry = Date.parse(registered.userJwtExpiresAt as string);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstExpiry - Date.now()) + 1000));
    const worker = await waitForWorker(
      manager,
      workerId,
      (seen) => isOnline(seen) && Date.parse(seen.lastHeartbeatAt as string) > firstExpiry,
    );
    expect(worker.connectivity).toBe("ONLINE");
    expect((await getWorker(manager, workerId)).conditions.map((c) => c.type)).toContain("DRAINING");

    // No permission violation, no expiry, no unplanned disconnect: only the terminated message.
    expect(
      agent.logs.filter((line) => line.level === "warn" || line.level === "error").map((line) => line.msg),
    ).toEqual(["dropping a command that cannot be read"]);

    expect(await agent.stop()).toEqual({ code: 0, signal: null });
  });
});
