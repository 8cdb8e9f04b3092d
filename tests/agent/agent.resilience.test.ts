/**
 * The agent rides out what a restart of the Manager's NATS looks like: at start the Manager
 * answers 503 (broker down) and the agent retries until it registers; later NATS drops the
 * running agent's connection and it reconnects, heartbeats and takes commands again.
 */

import { agentDirs, killAgents, startAgent } from "@tjm/devstack/agent-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager, testServices } from "../harness/manager.ts";
import { TcpProxy } from "../harness/tcp-proxy.ts";
import { issueToken } from "../harness/workers.ts";
import { isOnline, waitForWorker } from "../harness/workers-api.ts";

describe("the Worker agent when NATS goes away", () => {
  let proxy: TcpProxy;
  let manager: TestManager;
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const nats = new URL(testServices().natsUrl);
    proxy = await TcpProxy.start({ host: nats.hostname, port: Number(nats.port || 4222) });
    await proxy.cut();
    manager = await TestManager.start({
      natsUrl: `nats://127.0.0.1:${proxy.port}`,
      heartbeatIntervalMs: 200,
      lostAfterMs: 2000,
    });
  });
  afterAll(async () => {
    await killAgents();
    await cleanup?.();
    await manager?.close();
    await proxy?.close();
  });

  it("retries a 503 at start, then reconnects after losing NATS and still takes commands", async () => {
    const dirs = await agentDirs();
    cleanup = dirs.cleanup;
    const agent = startAgent({
      MANAGER_URL: manager.baseUrl,
      WORKER_STATE_DIR: dirs.stateDir,
      WORKER_WORK_DIR: dirs.workDir,
      FFMPEG_PATH: "/usr/bin/ffmpeg",
      ENROLLMENT_TOKEN: await issueToken(manager),
    });
    const retry = await agent.waitForMessage("the Manager is unavailable; retrying");
    expect(retry.err).toMatch(/answered 503: The message broker is unavailable/);

    await proxy.restore();
    const workerId = (await agent.waitForMessage("worker registered", 20_000)).workerId as string;
    await agent.waitForMessage("consuming commands");
    await waitForWorker(manager, workerId, isOnline);

    await proxy.cut();
    await agent.waitForMessage("disconnected from NATS; reconnecting");
    await proxy.restore();
    await agent.waitForMessage("reconnected to NATS", 20_000);
    const reconnectedAt = Date.now();
    await waitForWorker(
      manager,
      workerId,
      (seen) => isOnline(seen) && Date.parse(seen.lastHeartbeatAt as string) > reconnectedAt,
      20_000,
    );

    const drain = await manager.request(`/api/v1/operations/workers/${workerId}/drain`, { method: "POST" });
    expect(drain.status).toBe(202);
    await agent.waitForMessage("draining: this Worker takes no new leases", 20_000);
    expect(await agent.stop()).toEqual({ code: 0, signal: null });
  });
});
