import { type NatsServer, startNatsServer, waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSchema, TestManager, testServices } from "./harness/manager.ts";
import { TcpProxy } from "./harness/tcp-proxy.ts";

const upBody = {
  status: "ok",
  info: { database: { status: "up" }, broker: { status: "up" } },
  error: {},
  details: { database: { status: "up" }, broker: { status: "up" } },
};

async function readiness(manager: TestManager) {
  const response = await fetch(`${manager.baseUrl}/api/health/ready`);
  return { status: response.status, body: await response.json() };
}

describe("GET /api/health/live", () => {
  let manager: TestManager;
  beforeAll(async () => {
    // Points at nothing: liveness must not test any dependency.
    const schema = await createTestSchema(testServices().databaseUrl);
    manager = await TestManager.start({
      schema: schema.schema,
      databaseUrl: "postgres://postgres@127.0.0.1:1/none",
      natsUrl: "nats://127.0.0.1:1",
      // The built-in provider reads its keys from the database at start: trust one elsewhere.
      issuerUrl: "http://127.0.0.1:1/oidc",
    });
    afterAll(async () => {
      await manager.close();
      await schema.drop();
    });
  });

  it("answers ok with empty objects and tests no dependency", async () => {
    const response = await fetch(`${manager.baseUrl}/api/health/live`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok", info: {}, error: {}, details: {} });
  });
});

describe("GET /api/health/ready", () => {
  let manager: TestManager;
  let postgresProxy: TcpProxy;
  let nats: NatsServer;
  let schema: Awaited<ReturnType<typeof createTestSchema>>;

  beforeAll(async () => {
    const { databaseUrl } = testServices();
    schema = await createTestSchema(databaseUrl);
    const target = new URL(databaseUrl);
    postgresProxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    const proxied = new URL(databaseUrl);
    proxied.port = String(postgresProxy.port);
    nats = await startNatsServer();
    manager = await TestManager.start({
      schema: schema.schema,
      databaseUrl: proxied.toString(),
      natsUrl: nats.url,
    });
    await waitFor("readiness", async () => (await readiness(manager)).status === 200);
  });
  afterAll(async () => {
    await manager?.close();
    await postgresProxy?.close();
    await nats?.stop();
    await schema?.drop();
  });

  it("answers 200 with database and broker up", async () => {
    expect(await readiness(manager)).toEqual({ status: 200, body: upBody });
  });

  it("answers 503 naming the database while PostgreSQL is unreachable, and 200 once it returns", async () => {
    await postgresProxy.cut();
    const down = await readiness(manager);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({
      status: "error",
      info: { broker: { status: "up" } },
      error: { database: { status: "down", message: expect.any(String) } },
      details: { database: { status: "down" }, broker: { status: "up" } },
    });
    await postgresProxy.restore();
    await waitFor("database back", async () => (await readiness(manager)).status === 200);
    expect(await readiness(manager)).toEqual({ status: 200, body: upBody });
  });

  it("answers 503 naming the broker while NATS does not answer, and 200 once it does", async () => {
    nats.process.kill("SIGSTOP");
    try {
      // A PONG already in flight when the server stops can still answer the first probe;
      // from the next one on, nothing answers.
      const timedProbe = async () => {
        const started = Date.now();
        return { ...(await readiness(manager)), ms: Date.now() - started };
      };
      let down = await timedProbe();
      for (let retry = 0; retry < 3 && down.status === 200; retry++) down = await timedProbe();
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({
        status: "error",
        info: { database: { status: "up" } },
        error: { broker: { status: "down", message: "NATS did not answer within 3000 ms" } },
      });
      // The ping timeout bounds the probe, so an orchestrator's probe never hangs.
      expect(down.ms).toBeLessThan(4500);
    } finally {
      nats.process.kill("SIGCONT");
    }
    await waitFor("broker back", async () => (await readiness(manager)).status === 200);
    expect(await readiness(manager)).toEqual({ status: 200, body: upBody });
  });
});
