/**
 * A private, real S3 implementation for a test file or a bench run: OpenStack Swift (Debian's
 * 2.30 packages) with its s3api middleware, as four foreground Python processes (account,
 * container, object, proxy) bound to loopback ports chosen free, with all state in a temp
 * directory that stop() removes. It needs no systemd, /etc/swift, /srv, syslog or memcached
 * (saio.py), and never uses Swift's default ports (8080, 6200-6202), which the packages' own
 * units may hold.
 *
 * Unlike s3rver it answers ListParts, AbortMultipartUpload, ListMultipartUploads and
 * UploadPartCopy, and checks V4 signatures. What Swift 2.30's s3api lacks: aws-chunked bodies
 * (so checksums must be WHEN_REQUIRED), DeleteObjects without Content-MD5 (the clients made
 * here add it), and conditional PUT (If-None-Match: * answers 501 NotImplemented).
 *
 * Swift's servers call setsid(), so they leave the test runner's process group: stop() kills
 * them by PID, and each one also dies with this process (PR_SET_PDEATHSIG, see saio.py).
 * Install: apt-get install --no-install-recommends swift swift-proxy swift-account
 * swift-container swift-object python3-swift python3-lxml python3-requests attr
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir, userInfo } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  ListBucketsCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import type { StorageSettings } from "@tjm/protocol";
import { canConnect, freePort } from "../services.ts";

/** tempauth's account "test", user "tester": S3 access key "test:tester", secret "testing". */
export const SWIFT_CREDENTIALS = { accessKeyId: "test:tester", secretAccessKey: "testing" } as const;

const PYTHON = "/usr/bin/python3"; // python3-swift lives in the system interpreter, not a pyenv shim
/** The launcher every Swift server runs under (its path is in their command lines). */
export const SAIO = join(dirname(fileURLToPath(import.meta.url)), "saio.py");
const SERVERS = ["account", "container", "object", "proxy"] as const;
export type SwiftServerName = (typeof SERVERS)[number];
const STOP_GRACE_MS = 5_000;
/** Generous: on a loaded 2-core machine a start takes 10-25 s (about 5 s of CPU in all). */
const START_TIMEOUT_MS = 45_000;
const DIR_PREFIX = "tjm-swift-";

export interface SwiftServer {
  endpoint: string;
  port: number;
  /** The state directory (configs, rings, objects, one log per server under log/). */
  directory: string;
  settings: StorageSettings;
  createBucket(name: string): Promise<void>;
  /** A client for seeding and reading back (Content-MD5 added to DeleteObjects). */
  client(overrides?: Partial<S3ClientConfig>): S3Client;
  /** The proxy's log so far (access lines included): evidence of what reached the server. */
  proxyLog(): Promise<string>;
  /** The running servers' PIDs. */
  readonly pids: Partial<Record<SwiftServerName, number>>;
  /** SIGKILLs the proxy (a crash: open connections drop at once) and waits until it is gone. */
  killProxy(): Promise<void>;
  /** Starts the proxy again on the same port; resolves when S3 answers through it. */
  startProxy(): Promise<void>;
  stop(): Promise<void>;
}

export function swiftInstalled(): boolean {
  return existsSync("/usr/lib/python3/dist-packages/swift/common/middleware/s3api") && existsSync(PYTHON);
}

interface Ports {
  proxy: number;
  account: number;
  container: number;
  object: number;
}

function configs(dir: string, ports: Ports): Record<string, string> {
  const etc = join(dir, "etc");
  const common = (port: number, name: string) => `[DEFAULT]
bind_ip = 127.0.0.1
bind_port = ${port}
# A port taken since it was chosen fails the start in 2 s (default 30), and start() retries.
bind_timeout = 2
workers = 0
user = ${userInfo().username}
swift_dir = ${etc}
devices = ${join(dir, "node")}
mount_check = false
disable_fallocate = true
fallocate_reserve = 0
log_name = ${name}
log_level = INFO
`;
  const backend = (name: string, port: number) =>
    `${common(port, name)}
[pipeline:main]
pipeline = ${name}-server

[app:${name}-server]
use = egg:swift#${name}
`;
  return {
    "swift.conf": `[swift-hash]
swift_hash_path_prefix = tjm-test-prefix
swift_hash_path_suffix = tjm-test-suffix

[storage-policy:0]
name = Policy-0
default = yes
`,
    "account-server.conf": backend("account", ports.account),
    "container-server.conf": backend("container", ports.container),
    "object-server.conf": backend("object", ports.object),
    "proxy-server.conf": `${common(ports.proxy, "proxy")}
[pipeline:main]
# s3api multipart needs slo between s3api and the app; without it multipart is silently off.
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo versioned_writes proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
allow_account_management = true

[filter:s3api]
use = egg:swift#s3api
location = us-east-1
s3_acl = false

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin

[filter:cache]
# tempauth needs env['swift.cache']; an in-process dict instead of memcached
paste.filter_factory = saio:memcache_filter_factory

[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
[filter:versioned_writes]
use = egg:swift#versioned_writes
`,
  };
}

function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(
      { host: "127.0.0.1", port, path: "/healthcheck", agent: false, timeout: 1_000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    request.once("timeout", () => request.destroy());
    request.once("error", () => resolve(false));
  });
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM, then SIGKILL after the grace period; resolves once the process is gone. */
async function terminate(child: ChildProcess): Promise<void> {
  if (exited(child)) return;
  child.kill("SIGTERM");
  if (await waitForExit(child, STOP_GRACE_MS)) return;
  child.kill("SIGKILL");
  await waitForExit(child, STOP_GRACE_MS);
}

/** Adds the Content-MD5 Swift requires on DeleteObjects (the SDK sends a CRC32 instead). */
function addContentMd5(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === "DeleteObjectsCommand") {
        const request = args.request as { headers: Record<string, string>; body: string | Uint8Array };
        for (const header of Object.keys(request.headers)) {
          if (/^x-amz-checksum-|^x-amz-sdk-checksum-algorithm$/i.test(header)) delete request.headers[header];
        }
        request.headers["content-md5"] = createHash("md5").update(request.body).digest("base64");
      }
      return next(args);
    },
    { step: "build", name: "swiftContentMd5", priority: "low" },
  );
}

class Instance {
  readonly children = new Map<SwiftServerName, ChildProcess>();
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    readonly dir: string,
    readonly ports: Ports,
  ) {
    const { PYTHONHOME: _home, ...inherited } = process.env;
    this.env = {
      ...inherited,
      PYTHONPATH: dirname(SAIO),
      SAIO_SWIFT_DIR: join(dir, "etc"),
      SAIO_PARENT_PID: String(process.pid),
      // The proxy builds the rings before it starts (only it reads them).
      SAIO_RING_PORTS: [ports.account, ports.container, ports.object].join(","),
    };
  }

  async prepare(): Promise<void> {
    for (const sub of ["etc", "node/d1", "log", "run"]) await mkdir(join(this.dir, sub), { recursive: true });
    for (const [name, text] of Object.entries(configs(this.dir, this.ports))) {
      await writeFile(join(this.dir, "etc", name), text);
    }
  }

  async spawn(name: SwiftServerName): Promise<void> {
    const log = await open(join(this.dir, "log", `${name}.log`), "a");
    try {
      const child = spawn(
        PYTHON,
        [SAIO, "serve", `${name}-server`, join(this.dir, "etc", `${name}-server.conf`)],
        {
          env: this.env,
          stdio: ["ignore", log.fd, log.fd],
        },
      );
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", reject);
      });
      this.children.set(name, child);
      // For the run's global teardown, should this process end without stop().
      await writeFile(join(this.dir, "run", `${name}.pid`), String(child.pid));
    } finally {
      await log.close();
    }
  }

  async logTail(name: SwiftServerName): Promise<string> {
    const text = await readFile(join(this.dir, "log", `${name}.log`), "utf8").catch(() => "");
    return text.split("\n").slice(-15).join("\n");
  }

  /**
   * Until the servers `names` listen, the proxy's /healthcheck answers (it does not look at the
   * backends) and `probe` (an S3 request) succeeds.
   */
  async waitReady(probe: () => Promise<unknown>, names: readonly SwiftServerName[]): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let lastError: unknown;
    for (;;) {
      for (const name of names) {
        const child = this.children.get(name);
        if (child && exited(child)) {
          throw new Error(
            `swift ${name}-server exited (${child.exitCode ?? child.signalCode}) while starting:\n${await this.logTail(name)}`,
          );
        }
      }
      const up = await Promise.all(names.map((name) => canConnect(`http://127.0.0.1:${this.ports[name]}`)));
      if (up.every(Boolean) && (await healthy(this.ports.proxy))) {
        try {
          await probe();
          return;
        } catch (error) {
          lastError = error;
        }
      }
      if (Date.now() > deadline) {
        throw new Error(
          `swift did not answer S3 within ${START_TIMEOUT_MS} ms (last error: ${String(lastError)}); proxy log:\n${await this.logTail("proxy")}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.children.values()].map(terminate));
    this.children.clear();
  }
}

async function startInstance(
  dir: string,
  probe: (endpoint: string, write: boolean) => Promise<unknown>,
): Promise<Instance> {
  const [proxy = 0, account = 0, container = 0, object = 0] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const instance = new Instance(dir, { proxy, account, container, object });
  try {
    await instance.prepare();
    for (const name of SERVERS) await instance.spawn(name);
    await instance.waitReady(() => probe(`http://127.0.0.1:${proxy}`, true), SERVERS);
    return instance;
  } catch (error) {
    await instance.stopAll();
    throw error;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Kills the server whose PID file this is, if that PID is still one of this instance's servers. */
async function killRecorded(pidFile: string, stateDir: string): Promise<boolean> {
  const pid = Number(await readFile(pidFile, "utf8").catch(() => ""));
  if (!Number.isInteger(pid) || pid <= 0) return false;
  // A PID the kernel has since given to another process is left alone.
  const commandLine = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
  if (!commandLine.includes(SAIO) || !commandLine.includes(stateDir)) return false;
  try {
    process.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

/**
 * Swift instances whose test process ended without stop(): their servers are killed by the
 * PIDs they recorded (saio.py makes them die with their parent, but a parent killed before
 * PR_SET_PDEATHSIG took hold leaves them), and their state (a few hundred MiB each) removed.
 * Run at every start and from the test run's global teardown; returns how many servers it killed.
 */
export async function reapOrphanedSwift(): Promise<number> {
  let killed = 0;
  const names = await readdir(tmpdir()).catch(() => []);
  for (const name of names.filter((entry) => entry.startsWith(DIR_PREFIX))) {
    const dir = join(tmpdir(), name);
    const owner = Number(await readFile(join(dir, "owner.pid"), "utf8").catch(() => ""));
    if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue;
    for (const state of await readdir(dir).catch(() => [])) {
      const stateDir = join(dir, state);
      for (const pidFile of await readdir(join(stateDir, "run")).catch(() => [])) {
        if (await killRecorded(join(stateDir, "run", pidFile), stateDir)) killed++;
      }
    }
    await rm(dir, { recursive: true, force: true });
  }
  return killed;
}

export async function startSwift(): Promise<SwiftServer> {
  if (!swiftInstalled()) {
    throw new Error(
      "OpenStack Swift is not installed: apt-get install --no-install-recommends swift swift-proxy swift-account swift-container swift-object python3-swift python3-lxml python3-requests attr",
    );
  }
  await reapOrphanedSwift();
  const directory = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  await writeFile(join(directory, "owner.pid"), String(process.pid));
  const clients: S3Client[] = [];
  const makeClient = (endpoint: string, overrides: Partial<S3ClientConfig> = {}) => {
    const created = new S3Client({
      endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: SWIFT_CREDENTIALS,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      maxAttempts: 1,
      ...overrides,
    });
    addContentMd5(created);
    clients.push(created);
    return created;
  };
  // A bucket created and removed: the account, container and object servers all answer.
  const probe = async (endpoint: string, write: boolean) => {
    const client = new S3Client({
      endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: SWIFT_CREDENTIALS,
      maxAttempts: 1,
    });
    try {
      if (write) {
        await client.send(new CreateBucketCommand({ Bucket: "tjm-ready-probe" }));
        await client.send(new DeleteBucketCommand({ Bucket: "tjm-ready-probe" }));
      } else {
        await client.send(new ListBucketsCommand({}));
      }
    } finally {
      client.destroy();
    }
  };

  let instance: Instance | undefined;
  // A port another process took between choosing it and binding it: try again with new ones.
  for (let attempt = 1; !instance; attempt++) {
    const stateDir = join(directory, `state${attempt}`);
    try {
      instance = await startInstance(stateDir, probe);
    } catch (error) {
      const log = String(error);
      await rm(stateDir, { recursive: true, force: true });
      if (attempt >= 3 || !/Could not bind|Address already in use/.test(log)) {
        await rm(directory, { recursive: true, force: true });
        throw error;
      }
    }
  }
  const running = instance;
  const endpoint = `http://127.0.0.1:${running.ports.proxy}`;
  const settings: StorageSettings = {
    endpoint,
    region: "us-east-1",
    ...SWIFT_CREDENTIALS,
    forcePathStyle: true,
    checksums: "WHEN_REQUIRED",
    maxParts: 1000,
  };
  const admin = makeClient(endpoint);
  return {
    endpoint,
    port: running.ports.proxy,
    directory: running.dir,
    settings,
    client: (overrides) => makeClient(endpoint, overrides),
    async createBucket(name) {
      await admin.send(new CreateBucketCommand({ Bucket: name }));
    },
    proxyLog: () => readFile(join(running.dir, "log", "proxy.log"), "utf8"),
    get pids() {
      const pids: Partial<Record<SwiftServerName, number>> = {};
      for (const [name, child] of running.children) if (child.pid && !exited(child)) pids[name] = child.pid;
      return pids;
    },
    async killProxy() {
      const child = running.children.get("proxy");
      if (!child || exited(child)) return;
      child.kill("SIGKILL");
      await waitForExit(child, STOP_GRACE_MS);
    },
    async startProxy() {
      const child = running.children.get("proxy");
      if (child && !exited(child)) return;
      await running.spawn("proxy");
      await running.waitReady(() => probe(endpoint, false), ["proxy"]);
    },
    async stop() {
      for (const created of clients) created.destroy();
      try {
        await running.stopAll();
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    },
  };
}
