import { readFile } from "node:fs/promises";
import type { Authenticator } from "@nats-io/transport-node";
import { createLogger, type Logger } from "@tjm/platform";
import { type Config, parseEnv, redactConfig } from "./config.ts";
// Types only: the module itself is imported when one of its commands runs (it loads the argon2 addon).
import type { CommandContext } from "./identity/cli.ts";
import type { Recovery } from "./identity/recovery/index.ts";
import type { LogoutClients } from "./identity/sessions/index.ts";
// Types only: the server's modules are imported when `serve` runs, so that a command such as
// `accounts create` does not load the whole Manager (about a second of CPU per command).
import type { Manager } from "./manager.ts";
import type { Connect } from "./platform/broker.ts";
import { createSql, type Sql } from "./platform/db.ts";
import { loadMigrations, MigrationRefusedError, migrate, pendingMigrations } from "./platform/migrations.ts";
import { createProject, ProjectExistsError } from "./projects/store.ts";
import type { ProviderMount } from "./provider/node-listener.ts";

/** What differs between Node and Deno; everything else is shared here. */
export interface Runtime {
  name: "node" | "deno";
  env: Record<string, string | undefined>;
  args: string[];
  connectNats: Connect;
  /** Starts serving; resolves with a function that stops accepting connections. */
  serve(
    app: { fetch: (request: Request) => Response | Promise<Response> },
    host: string,
    port: number,
    provider?: ProviderMount,
  ): Promise<() => Promise<void>>;
  /** The built-in OpenID provider: oidc-provider is a Node (Koa) application, so Node only. */
  startProvider?: (options: { config: Config; sql: Sql; logger: Logger }) => Promise<
    ProviderMount & {
      logoutClients: LogoutClients;
      attachRecovery(recovery: Recovery): void;
      attachDelivery(delivery: Manager["delivery"]): void;
      stop(): Promise<void>;
    }
  >;
  onShutdownSignal(handler: () => void): void;
  writeStdout(line: string): void;
  writeStderr(line: string): void;
  exit(code: number): never;
}

const USAGE = `usage: manager [serve]                                  start the Manager
       manager migrate                                  apply pending migrations
       manager projects create --org NAME --name NAME   create a project (and its organization)
       manager accounts create --email E [--name NAME] [--role operator|client-admin …]
                                                        create an account; the password is read from stdin
       manager accounts disable --email E               disable an account and revoke its tokens
       manager clients create --name NAME [--redirect-uri URI …] [--post-logout-redirect-uri URI …]
                              [--backchannel-logout-uri URI]
                              [--grant authorization_code|refresh_token|client_credentials …]
                              [--resource AUDIENCE …] [--project ID …] [--first-party] [--public]
                                                        create an OAuth client; prints its secret once
       manager keys rotate                              add a signing key to the built-in provider: published
                                                        now, signing after PROVIDER_KEY_PUBLISH_LEAD_SECONDS
       manager enrollment-tokens issue [--pool P] [--ttl-seconds N] [--label L]
                                                        a one-time Worker enrollment token, shown once`;

const SHUTDOWN_DEADLINE_MS = 10_000;

/** Exit code when another installation is live on the subject prefix (2: configuration, 3: pending migrations). */
const EXIT_PREFIX_TAKEN = 4;

/** Exit code when a migration's code step refused the stored data (its message lists what to fix). */
const EXIT_MIGRATION_REFUSED = 5;

function loadConfig(runtime: Runtime): Config {
  const parsed = parseEnv(runtime.env);
  if (!parsed.ok) {
    runtime.writeStderr(
      `The Manager's configuration is invalid:\n${parsed.problems.map((p) => `  - ${p}`).join("\n")}`,
    );
    runtime.exit(2);
  }
  return parsed.config;
}

function openDatabase(config: Config): Sql {
  return createSql({
    url: config.DATABASE_URL,
    schema: config.DATABASE_SCHEMA,
    poolMax: config.DATABASE_POOL_MAX,
  });
}

/** The Manager's own NATS credentials: the .creds file named by NATS_CREDS_FILE, read once at start. */
export async function natsAuthenticator(config: Config): Promise<Authenticator | undefined> {
  if (config.NATS_AUTH === "none" || !config.NATS_CREDS_FILE) return undefined;
  const { credsAuthenticator } = await import("@nats-io/transport-node");
  return credsAuthenticator(new Uint8Array(await readFile(config.NATS_CREDS_FILE)));
}

/** Scalar's browser bundle, from the installed package (never a CDN). */
export const scalarBundle = async () =>
  new Uint8Array(await readFile(new URL(import.meta.resolve("@scalar/api-reference/browser/standalone.js"))));

async function serve(runtime: Runtime, config: Config, logger: Logger): Promise<void> {
  const sql = openDatabase(config);
  const pending = await pendingMigrations(sql, config.DATABASE_SCHEMA, await loadMigrations());
  if (pending.length > 0) {
    await sql.end();
    const names = pending.map((m) => `${String(m.version).padStart(4, "0")}_${m.name}`).join(", ");
    runtime.writeStderr(
      `The database schema "${config.DATABASE_SCHEMA}" has ${pending.length} pending migration(s): ${names}.\nThe Manager never migrates at start; run 'npm run migrate' with the same configuration, then start it again.`,
    );
    runtime.exit(3);
  }
  if (config.PROVIDER_ENABLED && !runtime.startProvider) {
    await sql.end();
    runtime.writeStderr(
      `PROVIDER_ENABLED=true, but the ${runtime.name} entrypoint does not serve the built-in OpenID provider (it needs Node).\nSet PROVIDER_ENABLED=false and point OIDC_ISSUER_URL at a Node Manager's provider (e.g. http://manager:8080/oidc) or an external OpenID provider.`,
    );
    runtime.exit(2);
  }
  // Only now, past the refusals above: a refused start loads none of the server.
  const [
    { managerOptionsFromConfig, startManager },
    { metricsApp },
    { createBroker },
    { InstallationConflictError },
  ] = await Promise.all([
    import("./manager.ts"),
    import("./metrics/index.ts"),
    import("./platform/broker.ts"),
    import("./presence/presence.ts"),
  ]);
  const provider = config.PROVIDER_ENABLED
    ? await runtime.startProvider?.({ config, sql, logger })
    : undefined;
  if (config.NATS_AUTH === "none") {
    logger.warn(
      "NATS_AUTH=none: Workers get no NATS credentials and anyone who reaches NATS can act as any Worker; use only for a local demo",
    );
  }
  const broker = createBroker(runtime.connectNats, config.NATS_URL, logger, {
    authenticator: await natsAuthenticator(config),
    streamReplicas: config.NATS_STREAM_REPLICAS,
  });
  let manager: Manager | undefined;
  let stopServing: (() => Promise<void>) | undefined;
  let stopServingMetrics: (() => Promise<void>) | undefined;
  let stopping = false;
  const shutdown = (code: number) => {
    if (stopping) return;
    stopping = true;
    logger.info("shutting down");
    const deadline = setTimeout(() => {
      logger.error("shutdown took too long; exiting");
      runtime.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    void (async () => {
      await stopServing?.();
      await stopServingMetrics?.();
      await provider?.stop();
      await manager?.stop();
      await broker.close();
      await sql.end({ timeout: 5 });
      clearTimeout(deadline);
      runtime.exit(code);
    })();
  };
  manager = await startManager(
    managerOptionsFromConfig(config, {
      sql,
      broker,
      logger,
      scalarBundle,
      // Only a Manager serving the provider sends back-channel logouts (it signs them).
      logoutClients: provider?.logoutClients,
      onInstallationConflict: (conflict) => {
        runtime.writeStderr(conflict.message);
        shutdown(EXIT_PREFIX_TAKEN);
      },
    }),
  ).catch(async (err) => {
    if (!(err instanceof InstallationConflictError)) throw err;
    await provider?.stop();
    await broker.close();
    await sql.end({ timeout: 5 });
    runtime.writeStderr(err.message);
    runtime.exit(EXIT_PREFIX_TAKEN);
  });
  provider?.attachRecovery(manager.recovery);
  provider?.attachDelivery(manager.delivery);
  stopServing = await runtime.serve(manager.app, config.HOST, config.PORT, provider);
  if (manager.metrics.endpoint === "own-port" && config.METRICS_PORT !== undefined) {
    // Only here, not on the API port: keep it on a network only Prometheus reaches.
    stopServingMetrics = await runtime.serve(
      metricsApp(manager.metrics, logger),
      config.METRICS_HOST,
      config.METRICS_PORT,
    );
    logger.info("metrics listening", { host: config.METRICS_HOST, port: config.METRICS_PORT });
  }
  if (provider) logger.info("OpenID provider serving", { issuer: config.OIDC_ISSUER_URL });
  logger.info("manager listening", {
    runtime: runtime.name,
    host: config.HOST,
    port: config.PORT,
    config: redactConfig(config),
  });
  runtime.onShutdownSignal(() => shutdown(0));
}

async function runMigrate(runtime: Runtime, config: Config, logger: Logger): Promise<void> {
  const sql = openDatabase(config);
  try {
    const applied = await migrate(sql, config.DATABASE_SCHEMA, await loadMigrations());
    logger.info(applied.length ? "migrations applied" : "no pending migrations", {
      schema: config.DATABASE_SCHEMA,
      applied: applied.map((m) => `${m.version}_${m.name}`),
    });
  } catch (err) {
    if (!(err instanceof MigrationRefusedError)) throw err;
    // The operator's to-do list, as written: not folded into a JSON log line.
    runtime.writeStderr(err.message);
    runtime.exit(EXIT_MIGRATION_REFUSED);
  } finally {
    await sql.end();
  }
}

function flag(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  const value = index >= 0 ? args[index + 1] : undefined;
  return value && !value.startsWith("--") ? value : undefined;
}

async function runProjectsCreate(runtime: Runtime, config: Config, args: string[]): Promise<void> {
  const org = flag(args, "--org")?.trim();
  const name = flag(args, "--name")?.trim();
  if (!org || !name) {
    runtime.writeStderr(`projects create needs --org NAME and --name NAME\n${USAGE}`);
    runtime.exit(2);
  }
  const sql = openDatabase(config);
  try {
    runtime.writeStdout(JSON.stringify(await createProject(sql, org, name)));
  } catch (err) {
    if (err instanceof ProjectExistsError) {
      runtime.writeStderr(err.message);
      runtime.exit(1);
    }
    throw err;
  } finally {
    await sql.end();
  }
}

async function runKeysRotate(runtime: Runtime, config: Config): Promise<void> {
  if (config.PROVIDER_KEY_ENCRYPTION_KEY === undefined) {
    runtime.writeStderr(
      "keys rotate needs PROVIDER_KEY_ENCRYPTION_KEY, the key the provider's signing keys are stored under",
    );
    runtime.exit(2);
  }
  const { deriveKey, rotateSigningKey } = await import("./provider/keys.ts");
  const { keyRetentionMs } = await import("./provider/retention.ts");
  const sql = openDatabase(config);
  try {
    const rotation = await rotateSigningKey(
      sql,
      deriveKey(config.PROVIDER_KEY_ENCRYPTION_KEY, "signing keys"),
      {
        leadSeconds: config.PROVIDER_KEY_PUBLISH_LEAD_SECONDS,
        retentionMs: keyRetentionMs(config),
      },
    );
    runtime.writeStdout(JSON.stringify(rotation));
  } finally {
    await sql.end();
  }
}

function commandContext(runtime: Runtime, config: Config): CommandContext {
  return {
    config,
    openDatabase: () => openDatabase(config),
    writeStdout: runtime.writeStdout,
    writeStderr: runtime.writeStderr,
    exit: runtime.exit,
    usage: USAGE,
  };
}

/** The Manager's command line, the same on Node and Deno. */
export async function main(runtime: Runtime): Promise<void> {
  const [command = "serve", ...rest] = runtime.args;
  const config = loadConfig(runtime);
  const cli = command !== "serve";
  const logger = createLogger(config.LOG_LEVEL, cli ? runtime.writeStderr : runtime.writeStdout, {
    service: "manager",
  });
  try {
    if (command === "serve") await serve(runtime, config, logger);
    else if (command === "migrate") await runMigrate(runtime, config, logger);
    else if (command === "projects" && rest[0] === "create")
      await runProjectsCreate(runtime, config, rest.slice(1));
    else if (command === "accounts" && rest[0] === "create")
      await (await import("./identity/cli.ts")).runAccountsCreate(
        commandContext(runtime, config),
        rest.slice(1),
      );
    else if (command === "keys" && rest[0] === "rotate" && rest.length === 1)
      await runKeysRotate(runtime, config);
    else if (command === "accounts" && rest[0] === "disable")
      await (await import("./identity/cli.ts")).runAccountsDisable(
        commandContext(runtime, config),
        rest.slice(1),
      );
    else if (command === "clients" && rest[0] === "create")
      await (await import("./identity/cli.ts")).runClientsCreate(
        commandContext(runtime, config),
        rest.slice(1),
      );
    else if (command === "enrollment-tokens" && rest[0] === "issue")
      await (await import("./enrollment/cli.ts")).runEnrollmentTokensIssue(
        commandContext(runtime, config),
        rest.slice(1),
      );
    else {
      runtime.writeStderr(USAGE);
      runtime.exit(2);
    }
  } catch (err) {
    logger.error(`${command} failed`, { err });
    runtime.exit(1);
  }
}
