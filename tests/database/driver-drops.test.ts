/**
 * postgres.js 3.4.9 with patches/postgres+3.4.9.patch, under the connection drops that crash
 * or hang the unpatched driver (docs/architecture.md, "PostgreSQL driver"). Each
 * reproduction (tests/database/reproductions.ts) runs in a child process on Node, Deno and
 * Bun, so a crash is seen as the child's exit and never takes the test runner down. 1–4 run
 * on the shared PostgreSQL, terminating only backends their child opened; 5 stops and starts
 * a private one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { REPOSITORY_ROOT } from "@tjm/devstack/manager-process";
import { type PrivatePostgres, startPrivatePostgres, waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testServices } from "../harness/manager.ts";

const bin = (name: string) => join(REPOSITORY_ROOT, "node_modules/.bin", name);
const SCRIPT = join(REPOSITORY_ROOT, "tests/database/reproductions.ts");

const RUNTIMES = {
  node: [bin("node"), SCRIPT],
  deno: [bin("deno"), "run", "--allow-net", "--allow-env", "--allow-read", "--allow-sys", SCRIPT],
  bun: [bin("bun"), SCRIPT],
};
type Runtime = keyof typeof RUNTIMES;

interface Finished {
  code: number | null;
  outcome: unknown;
  stderr: string;
}

/** One reproduction in its own process; its stdout lines are kept for `untilLine`. */
class Reproduction {
  private lines: string[] = [];
  private stderr = "";
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    let partial = "";
    child.stdout?.on("data", (chunk) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      this.lines.push(...parts);
    });
    child.stderr?.on("data", (chunk) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => child.once("close", (code) => resolve(code)));
  }

  static start(runtime: Runtime, scenario: string, databaseUrl: string): Reproduction {
    const [command, ...args] = RUNTIMES[runtime] as [string, ...string[]];
    return new Reproduction(
      spawn(command, [...args, scenario], {
        cwd: REPOSITORY_ROOT,
        env: { ...process.env, DATABASE_URL: databaseUrl, NO_COLOR: "1" },
      }),
    );
  }

  /** Waits until `line` has been printed `times` times in all. */
  async untilLine(line: string, times: number): Promise<void> {
    await waitFor(
      () => `"${line}" printed ${times} times (stdout: ${this.lines.join(" ")}; stderr: ${this.stderr})`,
      async () => {
        if (this.child.exitCode !== null) throw new Error(`the child exited early:\n${this.stderr}`);
        return this.lines.filter((l) => l === line).length >= times;
      },
      30_000,
      20,
    );
  }

  send(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  async finished(): Promise<Finished> {
    const code = await this.exited;
    const last = this.lines.at(-1);
    return { code, outcome: last ? JSON.parse(last) : undefined, stderr: this.stderr };
  }

  kill(): void {
    this.child.kill("SIGKILL");
  }
}

async function reproduce(runtime: Runtime, scenario: string): Promise<Finished> {
  return Reproduction.start(runtime, scenario, testServices().databaseUrl).finished();
}

/** The exit code and outcome, with the child's stderr as the failure message. */
function expectOutcome(finished: Finished, outcome: unknown): void {
  expect({ code: finished.code, outcome: finished.outcome }, finished.stderr).toEqual({ code: 0, outcome });
}

describe.each(Object.keys(RUNTIMES) as Runtime[])("postgres.js on %s", (runtime) => {
  it("1. a transaction whose backend is terminated rejects, and the next query gets a new backend", async () => {
    expectOutcome(await reproduce(runtime, "transaction"), {
      transaction: "CONNECTION_CLOSED",
      next: 1,
      end: "settled",
    });
  });

  it("2. a reserved connection whose backend is terminated, once released, leaves the pool working", async () => {
    expectOutcome(await reproduce(runtime, "reserved"), {
      reservedQuery: "CONNECTION_CLOSED",
      next: [1, 2, 3],
      end: "settled",
    });
  });

  it("3. an array-type lookup cancelled by statement_timeout rejects the query that opened the connection", async () => {
    expectOutcome(await reproduce(runtime, "type-lookup-timeout"), { first: "57014", end: "settled" });
  });

  it("3. a backend terminated during the array-type lookup: the reconnect answers the first query", async () => {
    expectOutcome(await reproduce(runtime, "type-lookup-terminated"), { first: 1, end: "settled" });
  });

  it("4. end() settles after the backend of an in-flight query was terminated", async () => {
    expectOutcome(await reproduce(runtime, "end-after-drop"), { query: "CONNECTION_CLOSED", end: "settled" });
  });

  it("4. end() waiting for an in-flight query settles when its backend is terminated", async () => {
    expectOutcome(await reproduce(runtime, "end-during-drop"), {
      query: "CONNECTION_CLOSED",
      end: "settled",
    });
  });
});

describe("5. PostgreSQL stopped and started under the Manager's client and its kind of load", () => {
  const STOP_STARTS = 3;
  let postgres: PrivatePostgres;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
  });
  afterAll(async () => {
    await postgres?.dispose();
  });

  it.each(Object.keys(RUNTIMES) as Runtime[])(
    "on %s: every failure is catchable, queries succeed after each start, end() settles",
    async (runtime) => {
      const child = Reproduction.start(runtime, "outage", postgres.url);
      let running = true;
      try {
        await child.untilLine("up", 1);
        for (let round = 1; round <= STOP_STARTS; round++) {
          await postgres.stop();
          running = false;
          await child.untilLine("down", round);
          await postgres.start();
          running = true;
          await child.untilLine("up", round + 1);
        }
        child.send("finish");
        const finished = await child.finished();
        expect({ code: finished.code, outcome: finished.outcome }, finished.stderr).toMatchObject({
          code: 0,
          outcome: { ups: STOP_STARTS + 1, loops: "settled", end: "settled" },
        });
      } finally {
        child.kill();
        if (!running) await postgres.start();
      }
    },
    90_000,
  );
});
