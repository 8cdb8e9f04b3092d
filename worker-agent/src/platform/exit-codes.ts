/**
 * How the agent's process ends. Each start-up failure has its own code so a supervisor
 * (systemd, Kubernetes, compose) can tell "fix the configuration" from "retry later"; the
 * worker-agent/README.md lists them.
 */
export const ExitCode = {
  OK: 0,
  /** Anything not listed below: a bug, or an answer the agent does not understand. */
  UNEXPECTED: 1,
  CONFIG_INVALID: 2,
  FFMPEG_UNUSABLE: 3,
  /** The Manager (or the NATS it names) did not answer within WORKER_STARTUP_TIMEOUT_MS. */
  MANAGER_UNREACHABLE: 4,
  /** The enrollment token was refused, or there is neither a stored identity nor a token. */
  ENROLLMENT_REFUSED: 5,
  /** The Manager refuses the stored identity: unknown or disabled Worker, stale instance. */
  IDENTITY_REJECTED: 6,
  /** WORKER_STATE_DIR cannot be trusted: another Manager's identity, loose permissions, damage. */
  STATE_REFUSED: 7,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure that ends the agent with a known exit code and one clear message. */
export class AgentExitError extends Error {
  override name = "AgentExitError";
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** stop() was called while the agent was still starting; not a failure. */
export class AgentStoppedError extends Error {
  override name = "AgentStoppedError";
  constructor() {
    super("the agent was stopped while starting");
  }
}
