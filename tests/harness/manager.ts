/**
 * A Manager per test file on real services: its own PostgreSQL schema (migrated), its own
 * NATS subject prefix, its own OIDC issuer, served over real HTTP on a free port.
 */
import { serve } from "@hono/node-server";
import { connect, credsAuthenticator } from "@nats-io/transport-node";
import type { StorageSettings } from "@tjm/protocol";
import { createTjmClient, type TjmClient } from "@tjm/sdk";
import { inject } from "vitest";
import { type Manager, startManager } from "../../manager/src/manager.ts";
import { createBroker } from "../../manager/src/platform/broker.ts";
import { createSql, type Sql } from "../../manager/src/platform/db.ts";
import { createLogger, type Logger, silentLogger } from "../../manager/src/platform/logger.ts";
import { loadMigrations, migrate } from "../../manager/src/platform/migrations.ts";
import { createProject } from "../../manager/src/projects/store.ts";
import { createCredentialIssuer } from "../../manager/src/workers/index.ts";
import { OPERATIONS_AUDIENCE, TENANT_AUDIENCE, TEST_ENROLLMENT_SECRET, TestIssuer } from "./oidc.ts";
import { waitFor } from "./services.ts";
import { deleteStreams } from "./streams.ts";

// biome-ignore lint/suspicious/noExplicitAny: tests read the job detail as JSON
export type JobDetail = any;

export interface UntilJobOptions {
  /** Default 20 s. */
  timeoutMs?: number;
  /** Default 100 ms. */
  pollMs?: number;
  /** What is waited for, in the timeout error; by default the job and the state. */
  what?: string;
}

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
  /** Default: the schema's name (unique per file, and a valid subject prefix). */
  subjectPrefix?: string;
  logger?: Logger;
  /** See ManagerOptions.background: off only where a test drives the loops by hand. */
  background?: boolean;
  /**
   * NATS in operator mode (tests/harness/nats-operator.ts): the Manager connects with these
   * credentials and signs Worker JWTs with the account signing key.
   */
  natsAuth?: {
    managerCreds: string;
    accountPublicKey: string;
    accountSigningSeed: string;
    /** Worker JWT lifetime; default 60 s. */
    ttlSeconds?: number;
  };
  heartbeatIntervalMs?: number;
  lostAfterMs?: number;
  /** Where leases send Workers and where the Manager promotes outputs; unreachable by default. */
  storage?: StorageSettings;
  dispatchTimeoutMs?: number;
  maxAttempts?: number;
  sseKeepAliveMs?: number;
  /**
   * Serve on this port instead of a free one the OS picks: a Manager restarted on the same
   * port is where its Workers' MANAGER_URL still points.
   */
  port?: number;
}

export interface CloseOptions {
  /**
   * Leave the subject prefix's streams (and the Workers' consumers on them) in place: another
   * replica still runs on them, or a restarted Manager takes over.
   */
  keepStreams?: boolean;
}

/** Execution settings for a Manager that runs no job unless a test gives it storage. */
export function testExecutionSettings(
  options: Pick<TestManagerOptions, "storage" | "dispatchTimeoutMs" | "maxAttempts"> = {},
) {
  return {
    storage: options.storage ?? {
      endpoint: "http://127.0.0.1:1",
      region: "us-east-1",
      accessKeyId: "unused",
      secretAccessKey: "unused",
      forcePathStyle: true,
      checksums: "WHEN_REQUIRED" as const,
    },
    dispatchTimeoutMs: options.dispatchTimeoutMs ?? 15_000,
    maxAttempts: options.maxAttempts ?? 3,
    jobDeadlineHours: 72,
  };
}

export class TestManager {
  private constructor(
    readonly baseUrl: string,
    readonly sql: Sql,
    readonly schema: string,
    readonly subjectPrefix: string,
    readonly natsUrl: string,
    readonly issuer: TestIssuer,
    readonly manager: Manager,
    /** How many times the app told the relay that a request committed a change. */
    readonly outboxWrites: { count: number },
    private readonly shutdown: (options: CloseOptions) => Promise<void>,
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
    const { natsAuth } = options;
    const broker = createBroker(
      connect,
      natsUrl,
      logger,
      natsAuth && credsAuthenticator(new TextEncoder().encode(natsAuth.managerCreds)),
    );
    const issuer = await TestIssuer.start();
    const writes = { count: 0 };
    const subjectPrefix = options.subjectPrefix ?? schema;
    const manager = await startManager({
      sql,
      broker,
      logger,
      schema,
      subjectPrefix,
      auth: { issuer: issuer.issuer, audience: OPERATIONS_AUDIENCE },
      maxBodyBytes: 1024 * 1024,
      scalarBundle: async () => new TextEncoder().encode("/* scalar */"),
      enrollmentTokenSecret: TEST_ENROLLMENT_SECRET,
      tenantAudience: TENANT_AUDIENCE,
      sseKeepAliveMs: options.sseKeepAliveMs,
      execution: testExecutionSettings(options),
      workers: {
        natsUrl,
        credentials:
          natsAuth &&
          createCredentialIssuer({
            subjectPrefix,
            accountPublicKey: natsAuth.accountPublicKey,
            signingKeySeed: natsAuth.accountSigningSeed,
            ttlSeconds: natsAuth.ttlSeconds ?? 60,
          }),
        heartbeatIntervalMs: options.heartbeatIntervalMs ?? 5000,
        lostAfterMs: options.lostAfterMs ?? 30_000,
      },
      background: options.background,
      onOutboxWritten: () => {
        writes.count++;
      },
    });
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: manager.app.fetch, hostname: "127.0.0.1", port: options.port ?? 0 }, () =>
        resolve(s),
      );
    });
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    return new TestManager(
      `http://127.0.0.1:${port}`,
      sql,
      schema,
      subjectPrefix,
      natsUrl,
      issuer,
      manager,
      writes,
      async ({ keepStreams = false }: CloseOptions) => {
        // Open streams (SSE) would hold close() forever.
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        await closed;
        await manager.stop();
        const nc = broker.connection();
        if (nc && !keepStreams) await deleteStreams(nc, subjectPrefix).catch(() => {});
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

  /** GET /api/v1/operations/jobs/{jobId}, parsed. */
  async job(jobId: string): Promise<JobDetail> {
    return (await this.request(`/api/v1/operations/jobs/${jobId}`)).json();
  }

  /** POST /api/v1/operations/jobs; throws unless it answers 201. Returns the new job's id. */
  async submitJob(body: unknown): Promise<string> {
    const response = await this.request("/api/v1/operations/jobs", { method: "POST", json: body });
    if (response.status !== 201) {
      throw new Error(`submitting a job: expected 201, got ${response.status} ${await response.text()}`);
    }
    return ((await response.json()) as { id: string }).id;
  }

  /**
   * Polls the job until it is in `stateOrCheck` (a state, or a check of the detail) and returns
   * the detail that passed; the timeout error names the last state seen.
   */
  async untilJob(
    jobId: string,
    stateOrCheck: string | ((job: JobDetail) => boolean),
    { timeoutMs = 20_000, pollMs = 100, what }: UntilJobOptions = {},
  ): Promise<JobDetail> {
    const check =
      typeof stateOrCheck === "string" ? (job: JobDetail) => job.state === stateOrCheck : stateOrCheck;
    const label = what ?? `job ${jobId} ${typeof stateOrCheck === "string" ? stateOrCheck : "condition"}`;
    let last: JobDetail;
    let passed: JobDetail;
    await waitFor(
      () => `${label} (last state seen: ${last === undefined ? "none" : last.state})`,
      async () => {
        last = await this.job(jobId);
        if (!check(last)) return false;
        passed = last;
        return true;
      },
      timeoutMs,
      pollMs,
    );
    return passed;
  }

  /** Puts a job straight into a state no route reaches yet (e.g. FAILED before Workers exist). */
  async forceJobState(jobId: string, state: string, attemptState: string): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`update jobs set state = ${state}, updated_at = now() where id = ${jobId}`;
      await tx`update attempts set state = ${attemptState}, updated_at = now()
               where id = (select current_attempt_id from jobs where id = ${jobId})`;
    });
  }

  close(options: CloseOptions = {}): Promise<void> {
    return this.shutdown(options);
  }
}
