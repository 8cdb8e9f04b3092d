import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPOSITORY_ROOT, runScript } from "@tjm/devstack/manager-process";
import { BrowserSession, parseForms } from "@tjm/devstack/oidc-client";
import type { ProcessResult } from "@tjm/devstack/run-process";
import { canConnect, waitFor } from "@tjm/devstack/services";
import { deleteStreams } from "@tjm/devstack/streams";
import { describe, expect, inject, it } from "vitest";
import { createSql } from "../manager/src/platform/db.ts";
import { testServices } from "./harness/manager.ts";

const OPERATOR_EMAIL = "operator@demo.tjm.local";
const MAX_HOPS = 20;

/** `npm run demo` serving (no --once), in its own process group as in a terminal. */
class ServingDemo {
  private output = "";
  private errors = "";
  private readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly pid: number;
  private exited = false;

  constructor(env: Record<string, string>) {
    const child = spawn("npm", ["run", "--silent", "demo"], {
      cwd: REPOSITORY_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.pid = child.pid as number;
    child.stdout.on("data", (chunk) => {
      this.output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      this.errors += chunk;
    });
    this.closed = new Promise((resolve) =>
      child.once("close", (code, signal) => {
        this.exited = true;
        resolve({ code, signal });
      }),
    );
  }

  stdout(): string {
    return this.output;
  }

  /** True once it serves; false when it ended before that. */
  async serving(timeoutMs: number): Promise<boolean> {
    const ready = async () => this.exited || this.output.includes("Serving until Ctrl-C");
    await waitFor("the demo serving", ready, timeoutMs, 250);
    return !this.exited;
  }

  /**
   * Ctrl-C as a terminal sends it: SIGINT to the whole foreground group. npm, once its script
   * has exited, ends itself with the same signal: that is its exit, not the demo's.
   */
  async interrupt(): Promise<ProcessResult & { signal: NodeJS.Signals | null }> {
    return this.stop(-this.pid, "SIGINT");
  }

  /** `kill <pid of npm run demo>`: the signal goes to npm alone, as a supervisor or a script sends it. */
  async terminate(): Promise<ProcessResult & { signal: NodeJS.Signals | null }> {
    return this.stop(this.pid, "SIGTERM");
  }

  private async stop(target: number, signal: NodeJS.Signals) {
    try {
      process.kill(target, signal);
    } catch {
      // already gone
    }
    const closed = await this.closed;
    return { ...closed, stdout: this.output, stderr: this.errors };
  }
}

/**
 * A browser's sign-in through the console: GET /auth/sign-in, the provider's sign-in page filled
 * in (a first-party client asks no consent), back to the console's callback and on to `/`.
 */
async function signInThroughConsole(consoleUrl: string, password: string): Promise<BrowserSession> {
  const browser = new BrowserSession();
  let url = new URL(`${consoleUrl}/auth/sign-in?returnTo=/`);
  let response = await browser.fetch(url);
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const location = response.headers.get("location");
    if (location !== null) {
      await response.body?.cancel();
      url = new URL(location, url);
      if (url.href === `${consoleUrl}/`) return browser;
      response = await browser.fetch(url);
      continue;
    }
    const html = await response.text();
    const login = parseForms(html, url).find((form) => "password" in form.fields);
    if (login === undefined)
      throw new Error(`unexpected page ${url} (${response.status}): ${html.slice(0, 300)}`);
    url = new URL(login.action);
    response = await browser.fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...login.fields, email: OPERATOR_EMAIL, password }),
    });
  }
  throw new Error("too many hops signing in through the console");
}

describe("npm run demo", () => {
  it("runs a real job end to end (s3rver, the Manager and its OpenID provider, the Admin console, a Worker agent, ffmpeg), prints what ffprobe says of its outputs, and serves again on the same schema until a SIGTERM to npm alone", async () => {
    const services = testServices();
    const schema = `${inject("schemaPrefix")}demo_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    // The demo keeps its keys and the operator's password under XDG_CACHE_HOME: a private one.
    const cache = await mkdtemp(join(tmpdir(), "tjm-demo-test-"));
    const env = {
      DATABASE_URL: services.databaseUrl,
      NATS_URL: services.natsUrl,
      DEMO_SCHEMA: schema,
      NATS_SUBJECT_PREFIX: schema,
      PORT: "0",
      XDG_CACHE_HOME: cache,
    };
    const stateFile = join(cache, "tjm-demo", `${schema}.env`);
    let result: ProcessResult;
    let second: ProcessResult & { signal?: NodeJS.Signals | null };
    let stateMode: number | undefined;
    let sessionStatus: number | undefined;
    let sessionBody: unknown;
    let tokenFile: string | undefined;
    let tokenFileMode: number | undefined;
    let jobStatusWithFileToken: number | undefined;
    try {
      result = await runScript(["demo", "--", "--once"], env);
      stateMode = existsSync(stateFile) ? statSync(stateFile).mode & 0o777 : undefined;
      // A second run on the same schema: the accounts and clients exist, the keys are reused. It
      // serves until Ctrl-C; meanwhile the operator signs in to the console as a browser would.
      if (result.code === 0) {
        const demo = new ServingDemo(env);
        try {
          if (await demo.serving(150_000)) {
            const consoleUrl = /^Admin console: (\S+)$/m.exec(demo.stdout())?.[1] as string;
            const password = /^Operator: \S+ \/ (\S+)$/m.exec(demo.stdout())?.[1] as string;
            const browser = await signInThroughConsole(consoleUrl, password);
            const session = await browser.fetch(`${consoleUrl}/api/session`);
            sessionStatus = session.status;
            sessionBody = await session.json();
            // The curl hint: `export TOKEN=$(cat FILE)`, then the job with that token.
            tokenFile = /^Try: export TOKEN=\$\(cat (\S+)\)$/m.exec(demo.stdout())?.[1] as string;
            tokenFileMode = statSync(tokenFile).mode & 0o777;
            const jobUrl = /^ +curl -H "authorization: Bearer \$TOKEN" (\S+)$/m.exec(
              demo.stdout(),
            )?.[1] as string;
            const token = (await readFile(tokenFile, "utf8")).trim();
            jobStatusWithFileToken = (await fetch(jobUrl, { headers: { authorization: `Bearer ${token}` } }))
              .status;
          }
        } finally {
          // SIGTERM to npm's pid alone, not to its group: the demo must hear it and clean up.
          second = await demo.terminate();
        }
      } else second = result;
    } finally {
      const sql = createSql({ url: services.databaseUrl, schema: "public", poolMax: 1 });
      await sql`drop schema if exists ${sql(schema)} cascade`;
      await sql.end();
      await deleteStreams(services.natsUrl, schema);
      await rm(cache, { recursive: true, force: true });
    }
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(
      second.code === 0 || second.signal === "SIGTERM",
      `the second run ended with code ${second.code}, signal ${second.signal}\n${second.stdout}\n${second.stderr}`,
    ).toBe(true);

    const { stdout } = result;
    expect(stdout).toMatch(/Manager on Node at http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toMatch(/S3: s3rver at http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toMatch(/Worker agent on Bun \(pid \d+\)/);
    // The built-in provider: the operator and the client made by the CLI, the sign-in headless.
    const issuer = /^OpenID provider: (http:\/\/127\.0\.0\.1:\d+\/oidc)$/m.exec(stdout)?.[1];
    expect(issuer, stdout).toBe(`${/Manager on Node at (\S+),/.exec(stdout)?.[1]}/oidc`);
    expect(stdout).toContain("operator account operator@demo.tjm.local created (role operator)");
    expect(stdout).toMatch(/operations client [0-9a-f-]{36} created/);
    expect(stdout).toMatch(
      /operator operator@demo\.tjm\.local signed in through the provider \(\d+ HTTP requests/,
    );
    expect(stdout).toMatch(/discovery: +http:\/\/127\.0\.0\.1:\d+\/oidc\/\.well-known\/openid-configuration/);
    // The Admin console: its client made by the CLI, started on loopback, answering 401 unsigned.
    expect(stdout).toMatch(
      /console client [0-9a-f-]{36} created \(first-party, confidential, for http:\/\/127\.0\.0\.1:\d+;/,
    );
    // The console on the host of every other URL, its readiness probe not worded as a failure.
    const consoleUrl = /^Admin console: (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout)?.[1] as string;
    expect(consoleUrl, stdout).toBeDefined();
    expect(stdout).toMatch(/ready: it answers and asks a browser to sign in$/m);
    expect(stdout).not.toMatch(/answered 401|no session yet/);
    expect(stdout).toMatch(/^• project [0-9a-f-]{36} \(organization "demo"\)/m);
    const password = /^Operator: operator@demo\.tjm\.local \/ (\S+)$/m.exec(stdout)?.[1];
    expect(password).toMatch(/^\S{12,}$/);
    expect(stateMode).toBe(0o600);

    // The second run serves: the same console client and address, and a sign-in through it works.
    expect(second.stdout).toContain("made by an earlier run, its password kept");
    expect(second.stdout).toMatch(/operations client [0-9a-f-]{36}: made by an earlier run/);
    const consoleClientId = /console client ([0-9a-f-]{36}) created/.exec(stdout)?.[1];
    expect(second.stdout).toContain(
      `console client ${consoleClientId}: made by an earlier run, its secret kept`,
    );
    expect(second.stdout).toContain("(kept from an earlier run)");
    expect(second.stdout).toContain(
      `\nAdmin console: ${consoleUrl}\nOperator: operator@demo.tjm.local / ${password}\n`,
    );
    expect(second.stdout).toMatch(/^Job [0-9a-f-]{36} COMPLETED/m);
    expect(sessionStatus).toBe(200);
    expect(sessionBody).toMatchObject({ signedIn: true, sub: expect.any(String) });
    // The operator's token in a 0600 file the Manager accepts, removed when the demo stops.
    expect(tokenFileMode).toBe(0o600);
    expect(jobStatusWithFileToken).toBe(200);
    expect(existsSync(tokenFile as string)).toBe(false);
    // SIGTERM to npm alone: everything it started is stopped.
    expect(second.stdout).toContain("Serving until Ctrl-C");
    expect(second.stdout).toMatch(
      /Cleaning up: the event stream, the Worker agent, the Admin console, the operator's token file, the Manager, s3rver, temp files\.\nDone\.\n$/,
    );
    const secondConsole = /^Admin console: (\S+)$/m.exec(second.stdout)?.[1] as string;
    expect(await canConnect(secondConsole)).toBe(false);
    const secondAgent = Number(/Worker agent on Bun \(pid (\d+)\)/.exec(second.stdout)?.[1]);
    expect(() => process.kill(secondAgent, 0)).toThrow();
    // Progress from the SSE job.progress events: plain lines, as stdout is not a terminal, one per
    // 10 % passed; no speed or ETA before ffmpeg has encoded a frame.
    const tenths = [...stdout.matchAll(/^job [0-9a-f]{8} attempt 1: +(\d+)%/gm)].map((match) =>
      Number(match[1]),
    );
    expect(tenths, stdout).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    expect(stdout).not.toMatch(/\b0 fps/);
    expect(stdout).toMatch(/^Job [0-9a-f-]{36} COMPLETED after [\d.]+ s \(1 attempt\)\./m);

    const outputs = [
      ...stdout.matchAll(
        /^ {2}(s3:\/\/\S+) .*\n {4}ffprobe: duration ([\d.]+) s, video (\w+) (\d+)x(\d+), audio (\w+) /gm,
      ),
    ].map(([, uri, duration, video, width, height, audio]) => ({
      uri,
      duration: Number(duration),
      video,
      width: Number(width),
      height: Number(height),
      audio,
    }));
    expect(outputs, stdout).toHaveLength(2);
    const [mp4, webm] = outputs;
    // 20 s clip less the removed 5-8 s.
    expect(mp4).toMatchObject({ video: "h264", width: 640, height: 360, audio: "aac" });
    expect(mp4?.uri).toMatch(/^s3:\/\/media-out\/demo\/.+\/360p\.mp4$/);
    expect(Math.abs((mp4?.duration ?? 0) - 17)).toBeLessThanOrEqual(0.2);
    expect(webm).toMatchObject({ video: "vp9", width: 426, height: 240, audio: "opus" });
    expect(webm?.uri).toMatch(/^s3:\/\/media-out\/demo\/.+\/240p\.webm$/);
    expect(Math.abs((webm?.duration ?? 0) - 17)).toBeLessThanOrEqual(0.2);

    expect(stdout).toMatch(/Manifest \(s3:\/\/media-out\/demo\/.+\/manifest\.json\):\n\{\n {2}"jobId": /);
    expect(stdout).toMatch(/API docs \(Scalar\): +http:\/\/127\.0\.0\.1:\d+\/api\/docs/);
    // --once: everything it started is stopped again, its temp files removed.
    expect(stdout).not.toContain("Serving until Ctrl-C");
    expect(stdout).toMatch(
      /Cleaning up: the event stream, the Worker agent, the Admin console, the operator's token file, the Manager, s3rver, temp files\.\nDone\.\n$/,
    );
    expect(await canConnect(consoleUrl)).toBe(false);
    const agentPid = Number(/Worker agent on Bun \(pid (\d+)\)/.exec(stdout)?.[1]);
    expect(() => process.kill(agentPid, 0)).toThrow();
    const managerUrl = /Manager on Node at (\S+),/.exec(stdout)?.[1] as string;
    expect(await canConnect(managerUrl)).toBe(false);
    for (const dir of [/data in (\S+)\)/.exec(stdout)?.[1], /Downloaded copies: (\S+)/.exec(stdout)?.[1]]) {
      expect(dir).toMatch(/^\/.+/);
      expect(existsSync(dir as string), dir).toBe(false);
    }
  }, 360_000);
});
