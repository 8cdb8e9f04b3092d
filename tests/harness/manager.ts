/**
 * A Manager per test file on real services: its own PostgreSQL schema (migrated), its own
 * NATS subject prefix, its own OIDC issuer, served over real HTTP on a free port.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "@nats-io/transport-node";
import {
  OPERATIONS_AUDIENCE,
  TENANT_AUDIENCE,
  TEST_ENROLLMENT_SECRET,
  TestIssuer,
} from "@tjm/devstack/oidc-issuer";
import { waitFor } from "@tjm/devstack/services";
import { deleteStreams } from "@tjm/devstack/streams";
import { createLogger, type Logger, silentLogger } from "@tjm/platform";
import type { StorageSettings } from "@tjm/protocol";
import { createTjmClient, type TjmClient } from "@tjm/sdk";
import { inject } from "vitest";
import { type Config, parseEnv } from "../../manager/src/config.ts";
import { resourceIndicator } from "../../manager/src/identity/resources.ts";
import { type Manager, managerOptionsFromConfig, startManager } from "../../manager/src/manager.ts";
import { createBroker } from "../../manager/src/platform/broker.ts";
import { createSql, type Sql } from "../../manager/src/platform/db.ts";
import { loadMigrations, migrate } from "../../manager/src/platform/migrations.ts";
import { createProject } from "../../manager/src/projects/store.ts";
import { startProviderMount } from "../../manager/src/provider/index.ts";
import { nodeListener } from "../../manager/src/provider/node-listener.ts";
import { natsAuthenticator } from "../../manager/src/runtime.ts";
import {
  clientToken,
  createTestAccount,
  createTestClient,
  signInAs,
  TEST_CLIENT_SECRET_HMAC_KEY,
  TEST_PROVIDER_KEY_ENCRYPTION_KEY,
} from "./identity.ts";

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

/**
 * The environment of a Manager command (`migrate`, `projects …`, a refused start) on `schema`,
 * without the built-in provider and with storage never reached.
 */
export function commandEnv(schema: string) {
  const services = testServices();
  return {
    DATABASE_URL: services.databaseUrl,
    DATABASE_SCHEMA: schema,
    NATS_URL: services.natsUrl,
    OIDC_ISSUER_URL: "http://127.0.0.1:1",
    // Not this file's subject: the built-in provider is tested in tests/provider/.
    PROVIDER_ENABLED: "false",
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
    NATS_AUTH: "none",
    // Never reached: these tests run no job.
    S3_ENDPOINT: "http://127.0.0.1:1",
    S3_ACCESS_KEY_ID: "unused",
    S3_SECRET_ACCESS_KEY: "unused",
  };
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
   * NATS in operator mode (@tjm/devstack/nats-operator): the Manager connects with these
   * credentials and signs Worker JWTs with the account signing key.
   */
  natsAuth?: {
    managerCredsFile: string;
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
  /** Extra configuration, as environment variables (e.g. PROVIDER_KEY_PUBLISH_LEAD_SECONDS). */
  env?: Record<string, string>;
  /** Trust another replica's provider instead of serving one (PROVIDER_ENABLED=false). */
  issuerUrl?: string;
  /**
   * The external operator issuer trusted for operations only (OIDC_OPERATOR_ISSUER_URL); null
   * for none. Default: the harness's own issuer (`TestManager.issuer`).
   */
  externalOperatorIssuer?: string | null;
  /** Scalar's real bundle where a browser renders /api/docs; a stub by default. */
  scalarBundle?: () => Promise<Uint8Array>;
}

export interface CloseOptions {
  /**
   * Leave the subject prefix's streams (and the Workers' consumers on them) in place: another
   * replica still runs on them, or a restarted Manager takes over.
   */
  keepStreams?: boolean;
}

/** Object storage of a Manager that runs no job unless a test gives it storage. */
const UNREACHABLE_STORAGE: StorageSettings = {
  endpoint: "http://127.0.0.1:1",
  region: "us-east-1",
  accessKeyId: "unused",
  secretAccessKey: "unused",
  forcePathStyle: true,
  checksums: "WHEN_REQUIRED",
};

/**
 * A test Manager's configuration, parsed from the environment it would have as a process (so
 * a test setting the configuration refuses fails the test); the rest are the defaults of
 * config.ts.
 */
export function testManagerConfig(
  settings: Pick<
    TestManagerOptions,
    | "natsAuth"
    | "heartbeatIntervalMs"
    | "lostAfterMs"
    | "storage"
    | "dispatchTimeoutMs"
    | "maxAttempts"
    | "env"
  > & {
    databaseUrl: string;
    natsUrl: string;
    schema: string;
    subjectPrefix: string;
    /** TJM's issuer: this Manager's own provider unless `providerEnabled` is false. */
    issuer: string;
    providerEnabled: boolean;
    /** The harness's own issuer, trusted as an external operator issuer (operations only). */
    externalOperatorIssuer?: string;
  },
): Config {
  const { natsAuth } = settings;
  const storage = settings.storage ?? UNREACHABLE_STORAGE;
  const number = (value: number | undefined) => (value === undefined ? undefined : String(value));
  const parsed = parseEnv({
    DATABASE_URL: settings.databaseUrl,
    DATABASE_SCHEMA: settings.schema,
    NATS_URL: settings.natsUrl,
    NATS_SUBJECT_PREFIX: settings.subjectPrefix,
    NATS_AUTH: natsAuth ? "jwt" : "none",
    NATS_CREDS_FILE: natsAuth?.managerCredsFile,
    NATS_ACCOUNT_PUBLIC_KEY: natsAuth?.accountPublicKey,
    NATS_ACCOUNT_SIGNING_KEY_SEED: natsAuth?.accountSigningSeed,
    WORKER_JWT_TTL_SECONDS: natsAuth && String(natsAuth.ttlSeconds ?? 60),
    HEARTBEAT_INTERVAL_MS: number(settings.heartbeatIntervalMs),
    WORKER_LOST_AFTER_MS: number(settings.lostAfterMs),
    DISPATCH_TIMEOUT_MS: number(settings.dispatchTimeoutMs),
    MAX_ATTEMPTS: number(settings.maxAttempts),
    S3_ENDPOINT: storage.endpoint,
    S3_REGION: storage.region,
    S3_ACCESS_KEY_ID: storage.accessKeyId,
    S3_SECRET_ACCESS_KEY: storage.secretAccessKey,
    S3_FORCE_PATH_STYLE: String(storage.forcePathStyle),
    S3_CHECKSUMS: storage.checksums,
    S3_MAX_PARTS: number(storage.maxParts),
    OIDC_ISSUER_URL: settings.issuer,
    OIDC_OPERATOR_ISSUER_URL: settings.externalOperatorIssuer,
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    OIDC_TENANT_AUDIENCE: TENANT_AUDIENCE,
    ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
    PROVIDER_ENABLED: String(settings.providerEnabled),
    PROVIDER_KEY_ENCRYPTION_KEY: TEST_PROVIDER_KEY_ENCRYPTION_KEY,
    CLIENT_SECRET_HMAC_KEY: TEST_CLIENT_SECRET_HMAC_KEY,
    ...settings.env,
  });
  if (!parsed.ok) throw new Error(`invalid test Manager configuration:\n${parsed.problems.join("\n")}`);
  return parsed.config;
}

export class TestManager {
  private constructor(
    readonly baseUrl: string,
    /** TJM's issuer: this Manager's own provider (or the one `issuerUrl` named). */
    readonly issuerUrl: string,
    readonly sql: Sql,
    readonly schema: string,
    readonly subjectPrefix: string,
    readonly natsUrl: string,
    /** The harness's own issuer, trusted as an external operator issuer: negative cases, operations only. */
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
    const issuer = await TestIssuer.start();
    const subjectPrefix = options.subjectPrefix ?? schema;
    // Listening first: the provider's issuer URL names the port.
    let listener: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    const server = createServer((req, res) => listener(req, res));
    // The test's fetch keeps an idle connection for the advertised 5 s less a threshold, on
    // timers that run late while this process is busy serving the Manager. A server closing it
    // only 1 s after the advertised time can race a request on it: the likely cause of the
    // ECONNRESETs seen on a loaded 2-core machine. Held longer, the client always ends it first.
    server.keepAliveTimeoutBuffer = 30_000;
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const providerEnabled = options.issuerUrl === undefined;
    const config = testManagerConfig({
      ...options,
      databaseUrl,
      natsUrl,
      schema,
      subjectPrefix,
      issuer: options.issuerUrl ?? `${baseUrl}/oidc`,
      providerEnabled,
      externalOperatorIssuer:
        options.externalOperatorIssuer === undefined
          ? issuer.issuer
          : (options.externalOperatorIssuer ?? undefined),
    });
    const provider = providerEnabled ? await startProviderMount({ config, sql, logger }) : undefined;
    const broker = createBroker(connect, config.NATS_URL, logger, {
      authenticator: await natsAuthenticator(config),
      streamReplicas: config.NATS_STREAM_REPLICAS,
    });
    const writes = { count: 0 };
    const manager = await startManager(
      managerOptionsFromConfig(config, {
        sql,
        broker,
        logger,
        scalarBundle: options.scalarBundle ?? (async () => new TextEncoder().encode("/* scalar */")),
        sseKeepAliveMs: options.sseKeepAliveMs,
        background: options.background,
        logoutClients: provider?.logoutClients,
        onOutboxWritten: () => {
          writes.count++;
        },
      }),
    );
    provider?.attachRecovery(manager.recovery);
    provider?.attachDelivery(manager.delivery);
    listener = nodeListener(manager.app, provider);
    return new TestManager(
      baseUrl,
      config.OIDC_ISSUER_URL,
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
        server.closeAllConnections();
        await closed;
        await provider?.stop();
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

  private operatorTokens: Promise<{ token: string; until: number }> | undefined;

  /**
   * An operations token from the built-in provider: a test operator signs in once through the
   * authorization-code flow (a first-party client, PKCE), and the token is reused until a
   * minute before it expires.
   */
  async operatorToken(): Promise<string> {
    const cached = await this.operatorTokens;
    if (cached && cached.until > Date.now()) return cached.token;
    this.operatorTokens = (async () => {
      const audience = OPERATIONS_AUDIENCE;
      const account = await createTestAccount(this.sql, { roles: ["operator"] });
      const client = await createTestClient(this.sql, { resources: [audience] });
      const tokens = await signInAs(this.issuerUrl, client, account, resourceIndicator(audience));
      return { token: tokens.accessToken, until: Date.now() + ((tokens.expiresIn ?? 60) - 60) * 1000 };
    })();
    this.operatorTokens.catch(() => {
      this.operatorTokens = undefined;
    });
    return (await this.operatorTokens).token;
  }

  /** A tenant token (client_credentials) for a new client bound to `projectIds`. */
  async tenantToken(projectIds: string[]): Promise<string> {
    const client = await createTestClient(this.sql, {
      resources: [TENANT_AUDIENCE],
      grantTypes: ["client_credentials"],
      projectIds,
    });
    return (await clientToken(this.issuerUrl, client, resourceIndicator(TENANT_AUDIENCE))).accessToken;
  }

  /** An SDK client with a fresh valid operator token. */
  client(token?: string): TjmClient {
    return createTjmClient({ baseUrl: this.baseUrl, token: token ?? (() => this.operatorToken()) });
  }

  /** Raw HTTP with an operator token unless `authorization` is given. */
  async request(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${await this.operatorToken()}`);
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
