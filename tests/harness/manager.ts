/**
 * A Manager per test file on real services: its own PostgreSQL schema (migrated), its own
 * NATS subject prefix, its own OIDC issuer, served over real HTTP on a free port.
 */
import { serve } from "@hono/node-server";
import { connect } from "@nats-io/transport-node";
import { createTjmClient, type TjmClient } from "@tjm/sdk";
import { inject } from "vitest";
import { createApp } from "../../manager/src/app.ts";
import { EventHub } from "../../manager/src/events/index.ts";
import { createOutboxRelay } from "../../manager/src/outbox/index.ts";
import { createBroker } from "../../manager/src/platform/broker.ts";
import { createSql, type Sql } from "../../manager/src/platform/db.ts";
import { createLogger, type Logger, silentLogger } from "../../manager/src/platform/logger.ts";
import { loadMigrations, migrate } from "../../manager/src/platform/migrations.ts";
import { createProject } from "../../manager/src/projects/store.ts";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET, TestIssuer } from "./oidc.ts";
import { deleteStreams } from "./streams.ts";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    natsUrl: string;
    /** Prefix of every schema this run creates, so the run can drop them all at the end. */
    schemaPrefix: string;
  }
}

export function testServices() {
  return { databaseUrl: inject("databaseUrl"), natsUrl: inject("natsUrl") };
}

/** A fresh, migrated schema with a random name; dropped by the returned function. */
export async function createTestSchema(
  databaseUrl: string,
): Promise<{ schema: string; sql: Sql; drop(): Promise<void> }> {
  const schema = `${inject("schemaPrefix")}${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const sql = createSql({ url: databaseUrl, schema, poolMax: 4, applicationName: "tjm-tests" });
  await migrate(sql, schema, await loadMigrations());
  return {
    schema,
    sql,
    async drop() {
      await sql`drop schema if exists ${sql(schema)} cascade`;
      await sql.end();
    },
  };
}

export interface TestManagerOptions {
  databaseUrl?: string;
  natsUrl?: string;
  /** Use an existing schema instead of a fresh one. */
  schema?: string;
  logger?: Logger;
  /**
   * Run the outbox relay and the event hub (default true). Off where a test cuts PostgreSQL:
   * postgres.js 3.4.9 can throw an uncatchable error when a connection drops mid-write
   * (porsager/postgres #1154, #1208), and the relay's polling makes that likely.
   */
  background?: boolean;
}

export class TestManager {
  private constructor(
    readonly baseUrl: string,
    readonly sql: Sql,
    readonly schema: string,
    readonly subjectPrefix: string,
    readonly issuer: TestIssuer,
    /** How many times the app told the relay that a request committed a change. */
    readonly outboxWrites: { count: number },
    private readonly shutdown: () => Promise<void>,
  ) {}

  static async start(options: TestManagerOptions = {}): Promise<TestManager> {
    const services = testServices();
    const databaseUrl = options.databaseUrl ?? services.databaseUrl;
    const natsUrl = options.natsUrl ?? services.natsUrl;
    const owned = options.schema ? undefined : await createTestSchema(services.databaseUrl);
    const schema = options.schema ?? (owned as { schema: string }).schema;
    const sql = createSql({ url: databaseUrl, schema, poolMax: 8, applicationName: "tjm-test-manager" });
    const logger =
      options.logger ?? (process.env.TJM_TEST_LOGS ? createLogger("debug", console.log) : silentLogger);
    const broker = createBroker(connect, natsUrl, logger);
    const issuer = await TestIssuer.start();
    const writes = { count: 0 };
    // The schema name is unique per file and a valid subject prefix.
    const subjectPrefix = schema;
    const relay = createOutboxRelay({ sql, schema, subjectPrefix, broker, logger });
    if (options.background !== false) await relay.start();
    const events = new EventHub(broker, subjectPrefix, logger);
    if (options.background !== false) events.start();
    const app = createApp({
      sql,
      broker,
      logger,
      auth: { issuer: issuer.issuer, audience: OPERATIONS_AUDIENCE },
      maxBodyBytes: 1024 * 1024,
      liveProgress: () => undefined,
      scalarBundle: async () => new TextEncoder().encode("/* scalar */"),
      events,
      enrollmentTokenSecret: TEST_ENROLLMENT_SECRET,
      outboxWritten: () => {
        writes.count++;
        relay.wake();
      },
    });
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(s));
    });
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    return new TestManager(
      `http://127.0.0.1:${port}`,
      sql,
      schema,
      subjectPrefix,
      issuer,
      writes,
      async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await events.stop();
        await relay.stop();
        if (broker.connection()) await deleteStreams(natsUrl, subjectPrefix).catch(() => {});
        await broker.close();
        await issuer.close();
        await sql.end({ timeout: 2 });
        await owned?.drop();
      },
    );
  }

  /** An SDK client with a fresh valid operator token. */
  client(token?: string): TjmClient {
    return createTjmClient({ baseUrl: this.baseUrl, token: token ?? (() => this.issuer.token()) });
  }

  /** Raw HTTP with an operator token unless `authorization` is given. */
  async request(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${await this.issuer.token()}`);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(init.json);
    }
    return fetch(`${this.baseUrl}${path}`, { ...init, headers, body });
  }

  async createProject(
    org = `org-${crypto.randomUUID()}`,
    name = "project",
  ): Promise<{ organizationId: string; projectId: string }> {
    return createProject(this.sql, org, name);
  }

  /** Puts a job straight into a state no route reaches yet (e.g. FAILED before Workers exist). */
  async forceJobState(jobId: string, state: string, attemptState: string): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`update jobs set state = ${state}, updated_at = now() where id = ${jobId}`;
      await tx`update attempts set state = ${attemptState}, updated_at = now()
               where id = (select current_attempt_id from jobs where id = ${jobId})`;
    });
  }

  close(): Promise<void> {
    return this.shutdown();
  }
}
