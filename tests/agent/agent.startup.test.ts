/**
 * Every way a start can fail ends the agent with its own exit code and one line saying why
 * (worker-agent/README.md): these run the real process against a real Manager.
 */
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createUser, type KeyPair } from "@nats-io/nkeys";
import { agentDirs, killAgents, startAgent } from "@tjm/devstack/agent-process";
import { freePort } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { enroll, issueToken } from "../harness/workers.ts";

interface Case {
  name: string;
  env: () => Promise<Record<string, string>>;
  code: number;
  stderr: RegExp;
}

describe("the Worker agent's start-up failures", () => {
  let manager: TestManager;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    manager = await TestManager.start();
  });
  afterAll(async () => {
    await killAgents();
    await Promise.all(cleanups.map((cleanup) => cleanup()));
    await manager?.close();
  });

  async function environment(overrides: Record<string, string> = {}) {
    const dirs = await agentDirs();
    cleanups.push(dirs.cleanup);
    return {
      MANAGER_URL: manager.baseUrl,
      WORKER_STATE_DIR: dirs.stateDir,
      WORKER_WORK_DIR: dirs.workDir,
      FFMPEG_PATH: "/usr/bin/ffmpeg",
      ...overrides,
    };
  }

  /** A state directory holding `keyPair` as the identity of `workerId` at `managerUrl`. */
  async function storedIdentity(keyPair: KeyPair, workerId: string, managerUrl = manager.baseUrl) {
    const env = await environment();
    await mkdir(env.WORKER_STATE_DIR, { mode: 0o700 });
    await writeFile(join(env.WORKER_STATE_DIR, "nkey.seed"), keyPair.getSeed(), { mode: 0o600 });
    await writeFile(join(env.WORKER_STATE_DIR, "identity.json"), JSON.stringify({ workerId, managerUrl }), {
      mode: 0o600,
    });
    return env;
  }

  const cases: Case[] = [
    {
      name: "missing configuration exits 2 listing every missing variable",
      env: async () => ({ WORKER_POOL: "gpu" }),
      code: 2,
      stderr:
        /configuration is invalid:\n {2}- MANAGER_URL: required but not set\n {2}- WORKER_STATE_DIR: required but not set\n {2}- WORKER_WORK_DIR: required but not set\n {2}- WORKER_POOL: Invalid option/,
    },
    {
      name: "an ffmpeg that cannot be started exits 3",
      env: async () =>
        environment({ ENROLLMENT_TOKEN: await issueToken(manager), FFMPEG_PATH: "/nonexistent" }),
      code: 3,
      stderr: /^tjm-worker: ffmpeg cannot be started: ffmpeg not found at \/nonexistent/m,
    },
    {
      name: "a Manager that stays unreachable for WORKER_STARTUP_TIMEOUT_MS exits 4",
      env: async () =>
        environment({
          MANAGER_URL: `http://127.0.0.1:${await freePort()}`,
          ENROLLMENT_TOKEN: "tjm-enrollment-token-never-checked",
          WORKER_STARTUP_TIMEOUT_MS: "1500",
        }),
      code: 4,
      stderr:
        /^tjm-worker: The Manager at http:\/\/127\.0\.0\.1:\d+ did not answer within WORKER_STARTUP_TIMEOUT_MS \(1500 ms/m,
    },
    {
      name: "a token the Manager does not know exits 5",
      env: async () => environment({ ENROLLMENT_TOKEN: "tjm-this-token-was-never-issued" }),
      code: 5,
      stderr:
        /^tjm-worker: The Manager refused the enrollment token: The enrollment token is invalid, expired or already used\./m,
    },
    {
      name: "no stored identity and no token exits 5",
      env: async () => environment(),
      code: 5,
      stderr: /^tjm-worker: WORKER_STATE_DIR .* holds no Worker identity and ENROLLMENT_TOKEN is not set/m,
    },
    {
      name: "an identity the Manager does not know exits 6",
      env: async () => storedIdentity(createUser(), crypto.randomUUID()),
      code: 6,
      stderr:
        /^tjm-worker: The Manager at .* rejected this Worker's identity \(.*\): Worker .* is not registered/m,
    },
    {
      name: "a Worker an operator disabled exits 6",
      env: async () => {
        const worker = await enroll(manager);
        const disabled = await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, {
          method: "POST",
        });
        expect(disabled.status).toBe(202);
        return storedIdentity(worker.keyPair, worker.workerId);
      },
      code: 6,
      stderr:
        /^tjm-worker: The Manager at .* rejected this Worker's identity \(.*\): Worker .* was disabled by an operator/m,
    },
    {
      name: "an identity registered with another Manager exits 7",
      env: async () => storedIdentity(createUser(), crypto.randomUUID(), "http://other-manager.example:8080"),
      code: 7,
      stderr:
        /^tjm-worker: .*identity\.json holds the identity of Worker .* registered with http:\/\/other-manager\.example:8080/m,
    },
    {
      name: "a seed file readable by others exits 7",
      env: async () => {
        const env = await storedIdentity(createUser(), crypto.randomUUID());
        await chmod(join(env.WORKER_STATE_DIR, "nkey.seed"), 0o644);
        return env;
      },
      code: 7,
      stderr: /^tjm-worker: .*nkey\.seed has mode 0644: .*\(chmod 600 /m,
    },
  ];

  it.concurrent.each(cases)("$name", async ({ env, code, stderr }) => {
    const agent = startAgent(await env());
    const exit = await agent.exited;
    expect(exit, agent.describe()).toEqual({ code, signal: null });
    expect(agent.stderr).toMatch(stderr);
    if (code !== 2) {
      // The same reason as one structured log line, for log pipelines.
      expect(agent.logs.filter((line) => line.level === "error")).toEqual([
        expect.objectContaining({ exitCode: code }),
      ]);
    }
  });

  it("stops at once, with exit 0, when SIGTERM arrives while it retries an unreachable Manager", async () => {
    const agent = startAgent(
      await environment({
        MANAGER_URL: `http://127.0.0.1:${await freePort()}`,
        ENROLLMENT_TOKEN: "tjm-enrollment-token-never-checked",
      }),
    );
    await agent.waitForMessage("the Manager is unavailable; retrying");
    const signalledAt = Date.now();
    expect(await agent.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(2000);
    expect(agent.stderr).toBe("");
  });
});
