/**
 * Runs the Worker agent as `npm run worker` does — `bun worker-agent/src/main.ts` — in a
 * child process, and reads its JSON log lines (for the tests, the demo and the bench). Every
 * process started here is tracked so a test file's afterAll can kill whatever a failed test
 * left running.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const bun = join(repoRoot, "node_modules/.bin/bun");

/** How long an exit waits for the agent's pipes to be read to their end. */
const OUTPUT_DRAIN_MS = 1000;

export type LogLine = { time: string; level: string; msg: string } & Record<string, unknown>;
export type Exit = { code: number | null; signal: NodeJS.Signals | null };

export class AgentProcess {
  readonly logs: LogLine[] = [];
  /** stdout lines that are not JSON (there should be none). */
  readonly otherOutput: string[] = [];
  private stderrText = "";
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<Exit>;
  private exit: Exit | undefined;

  constructor(readonly child: ChildProcess) {
    let pending = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        if (line === "") continue;
        try {
          this.logs.push(JSON.parse(line) as LogLine);
        } catch {
          this.otherOutput.push(line);
        }
      }
      this.notify();
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderrText += chunk;
    });
    const outputRead = Promise.all(
      [child.stdout, child.stderr].map(
        (stream) => stream && new Promise((resolve) => stream.once("close", resolve)),
      ),
    );
    this.exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        // What it wrote last may still be in the pipes at its exit; a child of its own that kept
        // them open must not hold the exit up for longer than a moment.
        void Promise.race([
          outputRead,
          new Promise((wait) => setTimeout(wait, OUTPUT_DRAIN_MS).unref()),
        ]).then(() => {
          this.exit = { code, signal };
          this.notify();
          resolve(this.exit);
        });
      });
    });
  }

  get stderr(): string {
    return this.stderrText;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /**
   * The first log line matching `match`, waiting for it to be written. 30 s by default: a first
   * start (ffmpeg probed, then registered) took over 15 s on a loaded 2-core machine.
   */
  async waitForLog(match: (line: LogLine) => boolean, timeoutMs = 30_000): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.logs.find(match);
      if (found) return found;
      if (!this.running) {
        throw new Error(
          `the agent exited (${JSON.stringify(this.exit)}) before logging it:\n${this.describe()}`,
        );
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the agent did not log it within ${timeoutMs} ms:\n${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        const self = this;
        function done() {
          clearTimeout(timer);
          self.waiters.delete(done);
          resolve();
        }
        this.waiters.add(done);
      });
    }
  }

  waitForMessage(msg: string, timeoutMs?: number): Promise<LogLine> {
    return this.waitForLog((line) => line.msg === msg, timeoutMs);
  }

  /** Sends `signal` and waits for the exit; SIGKILL if it outlives `timeoutMs`. */
  async stop(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 10_000): Promise<Exit> {
    if (!this.running) return this.exited;
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Logs and stderr, for failure messages. */
  describe(): string {
    return [...this.logs.map((line) => JSON.stringify(line)), ...this.otherOutput, this.stderrText].join(
      "\n",
    );
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

const started = new Set<AgentProcess>();

/**
 * Starts the agent with exactly `env` (plus PATH and HOME), from the repository root. Metrics
 * are off unless `env` sets WORKER_METRICS_PORT: agents of test files running side by side
 * would all want the default port.
 */
export function startAgent(env: Record<string, string | undefined>): AgentProcess {
  const child = spawn(bun, ["worker-agent/src/main.ts"], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, WORKER_METRICS_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const agent = new AgentProcess(child);
  started.add(agent);
  return agent;
}

/** Kills every agent this file started that is still running. */
export async function killAgents(): Promise<void> {
  await Promise.all([...started].map((agent) => agent.stop("SIGKILL")));
  started.clear();
}

/** Fresh state and work directories under one temp dir; remove with `cleanup`. */
export async function agentDirs(): Promise<{
  root: string;
  stateDir: string;
  workDir: string;
  cleanup(): Promise<void>;
}> {
  const root = await mkdtemp(join(tmpdir(), "tjm-agent-"));
  return {
    root,
    stateDir: join(root, "state"),
    workDir: join(root, "work"),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
