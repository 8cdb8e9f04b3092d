import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { agentDirs, killAgents, startAgent } from "@tjm/devstack/agent-process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { issueToken } from "../harness/workers.ts";
import { getWorker, isOnline, waitForWorker } from "../harness/workers-api.ts";

/** Real agents as processes: up to 20 s per test on a slow machine running the suite beside them. */
describe("the Worker agent (bun worker-agent/src/main.ts) against a Manager", { timeout: 60_000 }, () => {
  let manager: TestManager;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    manager = await TestManager.start({ heartbeatIntervalMs: 200, lostAfterMs: 2000 });
  });
  afterEach(async () => {
    await killAgents();
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });
  afterAll(async () => {
    await killAgents();
    await manager?.close();
  });

  async function environment(overrides: Record<string, string> = {}) {
    const dirs = await agentDirs();
    cleanups.push(dirs.cleanup);
    const env: Record<string, string> = {
      MANAGER_URL: manager.baseUrl,
      WORKER_STATE_DIR: dirs.stateDir,
      WORKER_WORK_DIR: dirs.workDir,
      FFMPEG_PATH: "/usr/bin/ffmpeg",
      ...overrides,
    };
    return { dirs, env };
  }

  it("registers at first start with a token, heartbeats, and shows ONLINE with its probed capabilities", async () => {
    const { dirs, env } = await environment({
      ENROLLMENT_TOKEN: await issueToken(manager),
      WORKER_NAME: "agent-first-start",
      WORKER_CAPACITY: "1",
    });
    const agent = startAgent(env);
    const registered = await agent.waitForMessage("worker registered");
    const workerId = registered.workerId as string;
    await agent.waitForMessage("worker started");

    const worker = await waitForWorker(manager, workerId, isOnline);
    expect(worker).toMatchObject({
      workerId,
      instanceId: registered.instanceId,
      name: "agent-first-start",
      pool: "cpu",
      connectivity: "ONLINE",
      certification: { status: "READY", reasons: [] },
      conditions: [],
      profile: { capacityCap: 1 },
      activeAttempts: [],
    });
    expect(worker.capabilities).toContain("libx264");
    expect(worker.freeCapacity).toBe(worker.capacity);

    // The seed and identity are the owner's alone; the token is not stored.
    expect((await stat(dirs.stateDir)).mode & 0o777).toBe(0o700);
    for (const file of ["nkey.seed", "identity.json"]) {
      expect((await stat(join(dirs.stateDir, file))).mode & 0o777, file).toBe(0o600);
    }
    expect(JSON.parse(await readFile(join(dirs.stateDir, "identity.json"), "utf8"))).toEqual({
      workerId,
      managerUrl: `${manager.baseUrl}/`,
    });
    expect(await readFile(join(dirs.stateDir, "nkey.seed"), "utf8")).toMatch(/^SU[A-Z2-7]{56}$/);
    expect(agent.otherOutput).toEqual([]);
    expect(agent.logs.filter((line) => line.level === "warn" || line.level === "error")).toEqual([]);
    expect(JSON.stringify(agent.logs)).not.toContain(env.ENROLLMENT_TOKEN);

    const stopAsked = Date.now();
    expect(await agent.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    expect(Date.now() - stopAsked).toBeLessThan(5000);
    expect(agent.logs.at(-1)).toMatchObject({ msg: "worker stopped", exitCode: 0 });
  });

  it("restarts without a token as a new instance of the same Worker", async () => {
    const { env } = await environment({ ENROLLMENT_TOKEN: await issueToken(manager) });
    const first = startAgent(env);
    const registered = await first.waitForMessage("worker registered");
    await first.waitForMessage("worker started");
    expect((await first.stop()).code).toBe(0);

    const { ENROLLMENT_TOKEN: _spent, ...withoutToken } = env;
    const second = startAgent(withoutToken);
    const reRegistered = await second.waitForMessage("worker re-registered");
    expect(reRegistered.workerId).toBe(registered.workerId);
    expect(reRegistered.instanceId).not.toBe(registered.instanceId);
    await second.waitForMessage("worker started");

    const worker = await waitForWorker(
      manager,
      registered.workerId as string,
      (seen) => isOnline(seen) && seen.instanceId === reRegistered.instanceId,
    );
    expect(worker.connectivity).toBe("ONLINE");
    expect((await second.stop()).code).toBe(0);
  });

  it("logs that it is draining when an operator drains it and that it is not once undrained, and acks both commands", async () => {
    const { env } = await environment({ ENROLLMENT_TOKEN: await issueToken(manager) });
    const agent = startAgent(env);
    const workerId = (await agent.waitForMessage("worker registered")).workerId as string;
    await agent.waitForMessage("consuming commands");

    const response = await manager.request(`/api/v1/operations/workers/${workerId}/drain`, {
      method: "POST",
    });
    expect(response.status).toBe(202);
    const draining = await agent.waitForMessage("draining: this Worker takes no new leases");
    expect(draining).toMatchObject({ level: "info", redelivered: false });
    expect((await getWorker(manager, workerId)).conditions.map((condition) => condition.type)).toContain(
      "DRAINING",
    );

    // Undrained: it takes leases again.
    const undrain = await manager.request(`/api/v1/operations/workers/${workerId}/undrain`, {
      method: "POST",
    });
    expect(undrain.status).toBe(202);
    expect((await undrain.json()).conditions).toEqual([]);
    expect(await agent.waitForMessage("undrained: this Worker takes leases again")).toMatchObject({
      level: "info",
    });

    // Acked, so a restart does not see the commands again.
    expect((await agent.stop()).code).toBe(0);
    const { ENROLLMENT_TOKEN: _spent, ...withoutToken } = env;
    const restarted = startAgent(withoutToken);
    await restarted.waitForMessage("consuming commands");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(restarted.logs.filter((line) => /^(un)?drain/.test(line.msg))).toEqual([]);
    expect((await restarted.stop()).code).toBe(0);
  });
});
