/**
 * deploy/'s programs run the way their containers run them, on this machine: `node` (the pinned
 * Node, with its own TypeScript type stripping, no tsx) for nats-init and the health probe, and
 * Debian's nats-server for the trust nats-init writes and the committed server configuration.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { jetstreamManager } from "@nats-io/jetstream";
import { decode } from "@nats-io/jwt";
import { connect, credsAuthenticator } from "@nats-io/transport-node";
import { REPOSITORY_ROOT } from "@tjm/devstack/manager-process";
import { spawnNatsServer } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MANAGER_CREDS_FILE,
  MANAGER_ENV_FILE,
  MANAGER_ENV_NAMES,
  SERVER_TRUST_FILE,
} from "../../deploy/nats/trust.ts";
import { readEnvFile } from "./compose-file.ts";

const run = promisify(execFile);

/** `node <script> …args` as a container runs it; resolves with its exit code and output. */
async function node(
  script: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(REPOSITORY_ROOT, script), ...args], {
      cwd: REPOSITORY_ROOT,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tjm-deploy-scripts-"));
});
afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe("deploy/nats/init.ts (the nats-init one-shot)", () => {
  it("makes the keys once, then renders the same trust at every start; seeds stay 0600 and are never printed", async () => {
    const keys = join(dir, "keys");
    const server = join(dir, "server");
    const manager = join(dir, "manager");
    const first = await node("deploy/nats/init.ts", [keys, server, manager]);
    expect(first.code, first.stderr).toBe(0);
    const firstLine = JSON.parse(first.stdout);
    expect(firstLine).toEqual({
      msg: "nats trust written",
      accountPublicKey: expect.stringMatching(/^A[A-Z2-7]{55}$/),
      created: ["operator", "system", "account", "signing", "manager"],
    });
    for (const name of ["operator", "system", "account", "signing", "manager"]) {
      expect(await modeOf(join(keys, `${name}.nk`))).toBe(0o600);
      expect(first.stdout).not.toContain((await readFile(join(keys, `${name}.nk`), "utf8")).trim());
    }
    expect(await modeOf(join(manager, MANAGER_CREDS_FILE))).toBe(0o600);
    expect(await modeOf(join(manager, MANAGER_ENV_FILE))).toBe(0o600);

    const env = readEnvFile(await readFile(join(manager, MANAGER_ENV_FILE), "utf8"));
    expect([...env.keys()]).toEqual([...MANAGER_ENV_NAMES]);
    expect(env.get("NATS_ACCOUNT_PUBLIC_KEY")).toBe(firstLine.accountPublicKey);
    expect(env.get("NATS_ACCOUNT_SIGNING_KEY_SEED")).toMatch(/^SA[A-Z2-7]{56}$/);
    // The Manager's user is signed by the account's signing key, for that account.
    const creds = await readFile(join(manager, MANAGER_CREDS_FILE), "utf8");
    const userJwt = /-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(creds)?.[1] ?? "";
    expect(decode<{ issuer_account: string }>(userJwt).nats.issuer_account).toBe(firstLine.accountPublicKey);

    const again = await node("deploy/nats/init.ts", [keys, server, manager]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ ...firstLine, created: [] });
    expect(readEnvFile(await readFile(join(manager, MANAGER_ENV_FILE), "utf8"))).toEqual(env);
  });

  it("refuses to run without its three directories (exit 2, usage)", async () => {
    const result = await node("deploy/nats/init.ts", [join(dir, "only-one")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("usage: node deploy/nats/init.ts KEYS_DIR SERVER_DIR MANAGER_DIR\n");
  });

  it("writes a trust nats-server accepts: the Manager's credentials connect and use JetStream", async () => {
    const out = join(dir, "served");
    const init = await node("deploy/nats/init.ts", [
      join(out, "keys"),
      join(out, "server"),
      join(out, "manager"),
    ]);
    expect(init.code, init.stderr).toBe(0);
    const config = join(out, "nats.conf");
    await writeFile(
      config,
      [
        "host: 127.0.0.1",
        "port: -1",
        `include "server/${SERVER_TRUST_FILE}"`,
        `jetstream: { store_dir: ${JSON.stringify(join(out, "jetstream"))} }`,
        "",
      ].join("\n"),
    );
    const natsServer = await spawnNatsServer(["-c", config], undefined);
    try {
      const creds = await readFile(join(out, "manager", MANAGER_CREDS_FILE));
      const nc = await connect({
        servers: natsServer.url,
        authenticator: credsAuthenticator(new Uint8Array(creds)),
      });
      try {
        const jsm = await jetstreamManager(nc);
        const info = await jsm.streams.add({ name: "DEPLOY_PROBE", subjects: ["deploy.probe"] });
        expect(info.config.name).toBe("DEPLOY_PROBE");
      } finally {
        await nc.close();
      }
      // Without credentials the server refuses: operator mode is on.
      await expect(connect({ servers: natsServer.url, reconnect: false })).rejects.toThrow();
    } finally {
      await natsServer.stop();
    }
  });
});

describe("deploy/nats/nats-server.conf", () => {
  it("parses with the trust nats-init writes, laid out as in the container (Debian's 2.9.10 lacks only sync_interval)", async () => {
    // /etc/nats/tjm.conf and the nats-trust volume at /etc/nats/trust, as compose.yaml mounts them.
    const etc = join(dir, "etc-nats");
    await mkdir(join(etc, "trust"), { recursive: true });
    const init = await node("deploy/nats/init.ts", [
      join(dir, "conf-keys"),
      join(etc, "trust"),
      join(dir, "conf-manager"),
    ]);
    expect(init.code, init.stderr).toBe(0);
    const committed = await readFile(join(REPOSITORY_ROOT, "deploy/nats/nats-server.conf"), "utf8");
    const lines = committed.split("\n");
    // 2.9.10 refuses the one setting from 2.10; everything else must pass as written.
    const kept = lines.filter((line) => !/^\s*sync_interval:/.test(line));
    expect(lines.length - kept.length).toBe(1);
    await writeFile(join(etc, "tjm.conf"), kept.join("\n").replace("/data/jetstream", join(dir, "js")));
    const { stdout, stderr } = await run("nats-server", ["-t", "-c", join(etc, "tjm.conf")], {
      env: { ...process.env, NATS_SERVER_NAME: "nats-1", PATH: `${process.env.PATH}:/usr/sbin` },
    });
    expect(`${stdout}${stderr}`).toContain("is valid");
    // The setting itself is refused by 2.9.10, which is why compose.yaml pins a 2.10+ image.
    await copyFile(join(REPOSITORY_ROOT, "deploy/nats/nats-server.conf"), join(etc, "as-committed.conf"));
    await expect(
      run("nats-server", ["-t", "-c", join(etc, "as-committed.conf")], {
        env: { ...process.env, NATS_SERVER_NAME: "nats-1", PATH: `${process.env.PATH}:/usr/sbin` },
      }),
    ).rejects.toMatchObject({ stderr: expect.stringContaining('unknown field "sync_interval"') });
  });
});

describe("deploy/http-probe.ts (the health checks)", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === "/ok") response.end("{}");
      else if (request.url === "/down") response.writeHead(503).end("{}");
      // /hang: never answers; the probe must give up by itself.
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("exits 0 on a 2xx and 1 on a 503, naming the status", async () => {
    expect((await node("deploy/http-probe.ts", [`${base}/ok`, "2000"])).code).toBe(0);
    const down = await node("deploy/http-probe.ts", [`${base}/down`, "2000"]);
    expect(down).toMatchObject({ code: 1, stderr: `${base}/down: HTTP 503\n` });
  });

  it("gives up after its own timeout on an answer that never comes", async () => {
    const started = Date.now();
    const hung = await node("deploy/http-probe.ts", [`${base}/hang`, "500"]);
    expect(hung.code).toBe(1);
    expect(hung.stderr).toMatch(/timeout|aborted/i);
    // The 500 ms timeout, not a hang: bounded well below a health check's 3–5 s (Node start included).
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe("deploy/gateway/haproxy.cfg", () => {
  // Debian's haproxy (scripts/system-deps, profile test); the image pins a newer one.
  it("passes `haproxy -c`", async () => {
    const { stdout } = await run("haproxy", [
      "-c",
      "-f",
      join(REPOSITORY_ROOT, "deploy/gateway/haproxy.cfg"),
    ]);
    expect(stdout).toContain("Configuration file is valid");
  });
});
