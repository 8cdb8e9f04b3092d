/**
 * One live installation per subject prefix: a Manager of another installation (another
 * database) refuses to start with exit code 4 and a message naming NATS_SUBJECT_PREFIX, at
 * start or, when NATS was down then, as soon as it connects; replicas and restored dumps of
 * the same installation start, and so does a new installation once the old one stopped.
 */
import { hostname } from "node:os";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { runScript, startManagerProcess } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET } from "@tjm/devstack/oidc-issuer";
import { freePort, waitFor } from "@tjm/devstack/services";
import { deleteStreams } from "@tjm/devstack/streams";
import { silentLogger } from "@tjm/platform";
import { presenceBucket } from "@tjm/protocol";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { createBroker } from "../../manager/src/platform/broker.ts";
import { createSql } from "../../manager/src/platform/db.ts";
import { loadMigrations, migrate } from "../../manager/src/platform/migrations.ts";
import {
  InstallationPresence,
  PRESENCE_KEY,
  type PresenceRecord,
  readInstallationId,
} from "../../manager/src/presence/presence.ts";
import { createDatabase, dumpSchema, restoreDump, type TestDatabase } from "../harness/databases.ts";
import { createTestSchema, TestManager, testServices } from "../harness/manager.ts";
import { TcpProxy } from "../harness/tcp-proxy.ts";

const undo: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of undo.splice(0).reverse()) await step();
});

function prefix(name: string): string {
  const subjectPrefix = `${inject("schemaPrefix")}${name}`;
  undo.push(() => deleteStreams(testServices().natsUrl, subjectPrefix));
  return subjectPrefix;
}

/** The Manager's environment for `npm run manager` on a database, schema and prefix. */
function managerEnv(
  databaseUrl: string,
  schema: string,
  subjectPrefix: string,
  natsUrl = testServices().natsUrl,
) {
  return {
    DATABASE_URL: databaseUrl,
    DATABASE_SCHEMA: schema,
    NATS_URL: natsUrl,
    NATS_SUBJECT_PREFIX: subjectPrefix,
    NATS_AUTH: "none",
    OIDC_ISSUER_URL: "http://127.0.0.1:1",
    // Not this file's subject: the built-in provider is tested in tests/provider/.
    PROVIDER_ENABLED: "false",
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
    // Never reached: these Managers run no job.
    S3_ENDPOINT: "http://127.0.0.1:1",
    S3_ACCESS_KEY_ID: "unused",
    S3_SECRET_ACCESS_KEY: "unused",
  };
}

/** What the prefix's presence bucket holds now (undefined: no live record). */
async function presenceRecord(subjectPrefix: string): Promise<PresenceRecord | undefined> {
  const nc = await connect({ servers: testServices().natsUrl });
  try {
    const kv = await new Kvm(nc).open(presenceBucket(subjectPrefix));
    const entry = await kv.get(PRESENCE_KEY);
    return entry?.operation === "PUT" ? entry.json<PresenceRecord>() : undefined;
  } finally {
    await nc.close();
  }
}

async function installationId(database: TestDatabase, schema: string): Promise<string> {
  const sql = createSql({ url: database.url, schema, poolMax: 1 });
  try {
    return await readInstallationId(sql);
  } finally {
    await sql.end();
  }
}

describe("one installation per subject prefix, between Manager processes", () => {
  let database: TestDatabase;
  const schema = `${inject("schemaPrefix")}installed`;
  const migrated = async (on: TestDatabase) => {
    const sql = createSql({ url: on.url, schema, poolMax: 1 });
    await migrate(sql, schema, await loadMigrations());
    await sql.end();
  };
  beforeAll(async () => {
    database = await createDatabase();
  });
  afterAll(() => database?.drop());

  it("a second installation refuses to start while the first is live; a replica, a re-created database and a restored dump start once it is right to", async () => {
    const subjectPrefix = prefix("prefix");
    await migrated(database);
    const first = await TestManager.start({ databaseUrl: database.url, schema, subjectPrefix });
    let firstRunning = true;
    undo.push(async () => {
      if (firstRunning) await first.close({ keepStreams: true });
    });
    const firstId = await installationId(database, schema);
    const dump = await dumpSchema(database, schema);
    undo.push(dump.remove);
    const live = await presenceRecord(subjectPrefix);
    expect(live).toEqual({
      installationId: firstId,
      managers: [
        {
          instanceId: expect.any(String),
          host: hostname(),
          pid: process.pid,
          startedAt: expect.any(String),
          refreshedAt: expect.any(String),
        },
      ],
    });
    const startedAt = live?.managers[0]?.startedAt;

    // Another installation: a database of its own, the same prefix.
    const other = await createTestSchema(testServices().databaseUrl);
    undo.push(other.drop);
    const otherId = await readInstallationId(other.sql);
    const refused = await runScript(
      ["manager"],
      managerEnv(testServices().databaseUrl, other.schema, subjectPrefix),
    );
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(
      `Another TJM installation is live on NATS_SUBJECT_PREFIX "${subjectPrefix}": installation ${firstId} (Managers: host ${hostname()}, pid ${process.pid}, started ${startedAt}, refreshed `,
    );
    expect(refused.stderr).toContain(`This database is installation ${otherId}.`);
    expect(refused.stderr).toContain("give this one its own NATS_SUBJECT_PREFIX");

    // A replica of the same installation starts beside the first.
    const replica = await startManagerProcess("node", managerEnv(database.url, schema, subjectPrefix));
    undo.push(replica.stop);
    const both = await presenceRecord(subjectPrefix);
    expect(both?.installationId).toBe(firstId);
    expect(both?.managers).toHaveLength(2);

    // Both stop gracefully: the last one out removes the record.
    await replica.stop();
    // The replica's own log says why, should it not have removed itself.
    expect((await presenceRecord(subjectPrefix))?.managers, replica.output()).toHaveLength(1);
    await first.close({ keepStreams: true });
    firstRunning = false;
    expect(await presenceRecord(subjectPrefix)).toBeUndefined();

    // The database re-created: a new installation, which may now take the prefix.
    await database.recreate();
    await migrated(database);
    const recreatedId = await installationId(database, schema);
    expect(recreatedId).not.toBe(firstId);
    const recreated = await startManagerProcess("node", managerEnv(database.url, schema, subjectPrefix));
    undo.push(recreated.stop);
    expect((await presenceRecord(subjectPrefix))?.installationId).toBe(recreatedId);
    await recreated.stop();
    expect(await presenceRecord(subjectPrefix)).toBeUndefined();

    // The dump of the first installation, restored elsewhere, is that installation again.
    const restored = await createDatabase();
    undo.push(restored.drop);
    await restoreDump(restored, dump.file);
    expect(await installationId(restored, schema)).toBe(firstId);
    const fromDump = await startManagerProcess("node", managerEnv(restored.url, schema, subjectPrefix));
    undo.push(fromDump.stop);
    expect((await presenceRecord(subjectPrefix))?.installationId).toBe(firstId);
    await fromDump.stop();
  }, 180_000);

  it("a Manager that takes its SIGTERM late still stops gracefully: nothing `npm run manager` starts above it kills it first", async () => {
    const subjectPrefix = prefix("late-signal");
    const installation = await createTestSchema(testServices().databaseUrl);
    undo.push(installation.drop);
    const manager = await startManagerProcess(
      "node",
      managerEnv(testServices().databaseUrl, installation.schema, subjectPrefix),
    );
    undo.push(manager.stop);
    const pid = (await presenceRecord(subjectPrefix))?.managers[0]?.pid;
    if (pid === undefined) throw new Error(`no Manager in the presence record:\n${manager.output()}`);
    // A loaded machine, made certain: the Manager runs again only a second after its process
    // group got SIGTERM. tsx's CLI SIGKILLed a child that had not answered a signal in 60 ms.
    process.kill(pid, "SIGSTOP");
    const stopped = manager.stop();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      throw new Error(`the Manager was killed before it could take its SIGTERM:\n${manager.output()}`);
    }
    await stopped;
    expect(await presenceRecord(subjectPrefix), manager.output()).toBeUndefined();
  }, 120_000);

  it("a Manager started while NATS is down serves with readiness 503, and exits 4 once NATS answers and another installation is live", async () => {
    const subjectPrefix = prefix("late");
    const live = await TestManager.start({ subjectPrefix });
    undo.push(() => live.close({ keepStreams: true }));
    const liveId = await readInstallationId(live.sql);

    const nats = new URL(testServices().natsUrl);
    const proxy = await TcpProxy.start({ host: nats.hostname, port: Number(nats.port) });
    undo.push(() => proxy.close());
    await proxy.cut();
    const late = await createTestSchema(testServices().databaseUrl);
    undo.push(late.drop);
    const port = await freePort();
    const exited = runScript(["manager"], {
      ...managerEnv(testServices().databaseUrl, late.schema, subjectPrefix, `nats://127.0.0.1:${proxy.port}`),
      HOST: "127.0.0.1",
      PORT: String(port),
    });
    // Whatever the test finds, the late Manager ends: once NATS answers, it meets the live one.
    undo.push(async () => {
      await proxy.restore();
      await exited;
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitFor(
      "the late Manager serving",
      () =>
        fetch(`${baseUrl}/api/health/live`).then(
          (response) => response.ok,
          () => false,
        ),
      60_000,
    );
    const ready = await fetch(`${baseUrl}/api/health/ready`);
    expect(ready.status).toBe(503);
    expect((await ready.json()).error.broker).toEqual({
      status: "down",
      message: `not connected to NATS at nats://127.0.0.1:${proxy.port}`,
    });

    await proxy.restore();
    const result = await exited;
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(
      `Another TJM installation is live on NATS_SUBJECT_PREFIX "${subjectPrefix}": installation ${liveId}`,
    );
    expect((await presenceRecord(subjectPrefix))?.installationId).toBe(liveId);
  }, 120_000);
});

describe("the presence record", () => {
  const natsUrl = () => testServices().natsUrl;

  async function presenceOf(subjectPrefix: string, options: { refreshMs?: number; ttlMs?: number } = {}) {
    const installation = await createTestSchema(testServices().databaseUrl);
    undo.push(installation.drop);
    const broker = createBroker(connect, natsUrl(), silentLogger);
    undo.push(() => broker.close());
    const presence = new InstallationPresence({
      broker,
      sql: installation.sql,
      subjectPrefix,
      logger: silentLogger,
      ...options,
    });
    undo.push(() => presence.stop());
    return { presence, broker, installationId: await readInstallationId(installation.sql) };
  }

  it("goes to exactly one of several installations starting at once", async () => {
    const subjectPrefix = prefix("race");
    const contenders = await Promise.all(Array.from({ length: 4 }, () => presenceOf(subjectPrefix)));
    for (const { presence } of contenders) presence.start();
    await Promise.all(contenders.map(({ presence }) => presence.settled(10_000)));

    const holders = contenders.filter(({ presence }) => presence.holdsPrefix);
    expect(holders).toHaveLength(1);
    const holder = holders[0]?.installationId;
    for (const { presence } of contenders.filter(({ presence }) => !presence.holdsPrefix))
      expect(presence.conflict?.live.installationId).toBe(holder);
    expect((await presenceRecord(subjectPrefix))?.installationId).toBe(holder);
  });

  it("of Managers that died without removing it expires after the bucket's max_age, and another installation may then start", async () => {
    const subjectPrefix = prefix("expiry");
    const ttlMs = 1500;
    const dead = await presenceOf(subjectPrefix, { refreshMs: 300, ttlMs });
    // Made (schema migrated) before the first one dies: a slow machine must not spend the
    // record's whole max_age preparing the installation that should find it.
    const tooEarly = await presenceOf(subjectPrefix, { refreshMs: 300, ttlMs });
    dead.presence.start();
    await dead.presence.settled(10_000);
    expect(dead.presence.holdsPrefix).toBe(true);
    // Its connection gone, it refreshes no more and removes nothing: as if killed.
    await dead.broker.close();
    const diedAt = Date.now();

    tooEarly.presence.start();
    await tooEarly.presence.settled(10_000);
    expect(tooEarly.presence.conflict?.live.installationId).toBe(dead.installationId);

    await waitFor(
      "the record to expire",
      async () => (await presenceRecord(subjectPrefix)) === undefined,
      10_000,
    );
    expect(Date.now() - diedAt).toBeGreaterThanOrEqual(ttlMs - 500);
    const later = await presenceOf(subjectPrefix, { refreshMs: 300, ttlMs });
    later.presence.start();
    await later.presence.settled(10_000);
    expect(later.presence.holdsPrefix).toBe(true);
    expect((await presenceRecord(subjectPrefix))?.installationId).toBe(later.installationId);
  });

  it("keeps the Manager off the prefix until it holds it: no connection, and readiness down, before", async () => {
    const { presence, broker } = await presenceOf(prefix("guard"));
    const guarded = presence.guardedBroker();
    await waitFor("NATS connected", async () => broker.connection() !== undefined);
    expect(guarded.connection()).toBeUndefined();
    await expect(guarded.ping(1000)).rejects.toThrow(/^not yet checked that no other installation is live/);

    presence.start();
    await presence.settled(10_000);
    expect(presence.holdsPrefix).toBe(true);
    expect(guarded.connection()).toBe(broker.connection());
    await expect(guarded.ping(1000)).resolves.toBeUndefined();
  });
});
