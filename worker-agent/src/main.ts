/**
 * The Worker agent's entrypoint (`npm run worker`, on Bun): parse the environment, start the
 * agent, stop it on SIGTERM/SIGINT. Every way a start can fail ends the process with its own
 * exit code (exit-codes.ts) and one line saying what to do.
 */
import { hostname } from "node:os";
import { createLogger } from "@tjm/platform";
import { WorkerAgent } from "./agent.ts";
import { type Config, parseEnv, redactConfig } from "./config.ts";
import { AgentExitError, AgentStoppedError, ExitCode } from "./platform/exit-codes.ts";
import { stopOnSignals } from "./platform/shutdown.ts";

/** Exits once what was written to stdout and stderr has left the process (pipes may buffer). */
async function exit(code: number): Promise<never> {
  const flushed = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => stream.write("", () => resolve()));
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

function loadConfig(): Config | undefined {
  const parsed = parseEnv(process.env, hostname());
  if (parsed.ok) return parsed.config;
  process.stderr.write(
    `The Worker agent's configuration is invalid:\n${parsed.problems.map((problem) => `  - ${problem}`).join("\n")}\n`,
  );
  return undefined;
}

const config = loadConfig() ?? (await exit(ExitCode.CONFIG_INVALID));
const logger = createLogger(config.LOG_LEVEL, (line) => process.stdout.write(`${line}\n`));
const runtime = process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.versions.node}`;
logger.info("worker agent starting", { runtime, pid: process.pid, config: redactConfig(config) });

const agent = new WorkerAgent({ config, logger });
stopOnSignals({ stop: () => agent.stop(), logger, exit: (code) => void exit(code) });

try {
  await agent.start();
} catch (err) {
  if (!(err instanceof AgentStoppedError) && !agent.stopRequested) {
    const known = err instanceof AgentExitError;
    const code = known ? err.exitCode : ExitCode.UNEXPECTED;
    const message = known ? err.message : `unexpected error while starting: ${(err as Error).message}`;
    logger.error(message, { exitCode: code, ...(known ? {} : { err }) });
    process.stderr.write(`tjm-worker: ${message}\n`);
    await exit(code);
  }
}

const outcome = await agent.exited;
if (outcome.message) process.stderr.write(`tjm-worker: ${outcome.message}\n`);
await exit(outcome.code);
