/**
 * How a Worker becomes a running instance: the first start registers with the enrollment
 * token; every later start proves it holds its NKey (challenge–response) and re-registers,
 * keeping its workerId. While the Manager is unreachable or unavailable this retries until
 * WORKER_STARTUP_TIMEOUT_MS; every refusal ends the start with its own exit code.
 */
import type { KeyPair } from "@nats-io/nkeys";
import type { Logger } from "@tjm/platform";
import {
  type ChallengePurpose,
  challengeSigningInput,
  PROTOCOL_VERSION,
  type ProbeReport,
  type WorkerChallenge,
  type WorkerCredentials,
  type WorkerPool,
  type WorkerRegistrationResponse,
} from "@tjm/protocol";
import type { WorkerMetrics } from "../metrics/worker-metrics.ts";
import { DEFAULT_BACKOFF, retryDelayBefore } from "../platform/backoff.ts";
import { AgentExitError, AgentStoppedError, ExitCode } from "../platform/exit-codes.ts";
import { sleep } from "../platform/sleep.ts";
import {
  type ManagerApi,
  ManagerProtocolError,
  ManagerRefusedError,
  ManagerUnavailableError,
  REQUEST_TIMEOUT_MS,
} from "./manager-api.ts";

export interface WorkerDescription {
  name: string;
  pool: WorkerPool;
  capacityCap: number | null;
  probe: ProbeReport;
}

export interface StartupContext {
  api: ManagerApi;
  managerUrl: string;
  logger: Logger;
  /** Epoch ms after which an unreachable Manager ends the start (exit code 4). */
  deadline: number;
  /** WORKER_STARTUP_TIMEOUT_MS, for messages. */
  timeoutMs: number;
  signal: AbortSignal;
  now: () => number;
  random: () => number;
  /** Unset when the agent serves no metrics. */
  metrics?: WorkerMetrics | undefined;
}

/** The base64url (no padding) Ed25519 signature of the challenge, as the Manager verifies it. */
export function signChallenge(keyPair: KeyPair, workerId: string, challenge: WorkerChallenge): string {
  return Buffer.from(keyPair.sign(challengeSigningInput(workerId, challenge))).toString("base64url");
}

async function answeredChallenge(
  api: ManagerApi,
  keyPair: KeyPair,
  workerId: string,
  purpose: ChallengePurpose,
  timeoutMs?: number,
) {
  const challenge = await api.challenge(workerId, purpose, timeoutMs);
  return { challengeId: challenge.challengeId, signature: signChallenge(keyPair, workerId, challenge) };
}

/** First start: spends the enrollment token; the answer carries the new workerId. */
export function register(
  context: StartupContext,
  keyPair: KeyPair,
  enrollmentToken: string,
  description: WorkerDescription,
): Promise<WorkerRegistrationResponse> {
  return untilAvailable(context, "register", async (timeoutMs) => {
    try {
      return await context.api.register(
        {
          protocolVersion: PROTOCOL_VERSION,
          enrollmentToken,
          publicKey: keyPair.getPublicKey(),
          ...description,
        },
        timeoutMs,
      );
    } catch (err) {
      if (!(err instanceof ManagerRefusedError)) throw err;
      if (err.status === 401 || err.status === 403) {
        throw new AgentExitError(
          ExitCode.ENROLLMENT_REFUSED,
          `The Manager refused the enrollment token: ${err.message}. Ask an operator for a new token and set ENROLLMENT_TOKEN.`,
          { cause: err },
        );
      }
      if (err.status === 409) {
        throw new AgentExitError(
          ExitCode.ENROLLMENT_REFUSED,
          `The Manager already knows this Worker's NKey but WORKER_STATE_DIR has no identity.json (was it deleted?): ${err.message}. Empty WORKER_STATE_DIR and enroll with a new ENROLLMENT_TOKEN.`,
          { cause: err },
        );
      }
      throw refusedUnexpectedly("registration", err);
    }
  });
}

/** Every later start: a new instance of the same Worker, proven with the NKey. */
export function reRegister(
  context: StartupContext,
  keyPair: KeyPair,
  workerId: string,
  description: WorkerDescription,
  resumableAttempts: { attemptId: string; fencingToken: string }[],
): Promise<WorkerRegistrationResponse> {
  return untilAvailable(context, "re-register", async (timeoutMs) => {
    try {
      // A fresh challenge per try: a challenge is single use and expires.
      const proof = await answeredChallenge(context.api, keyPair, workerId, "re-registration", timeoutMs);
      const answer = await context.api.reRegister(
        { protocolVersion: PROTOCOL_VERSION, workerId, ...proof, ...description, resumableAttempts },
        timeoutMs,
      );
      if (answer.workerId !== workerId) {
        throw new ManagerProtocolError(
          `the Manager re-registered Worker ${answer.workerId}, not ${workerId}`,
        );
      }
      return answer;
    } catch (err) {
      if (!(err instanceof ManagerRefusedError)) throw err;
      if ([401, 403, 404, 409].includes(err.status)) {
        throw new AgentExitError(
          ExitCode.IDENTITY_REJECTED,
          `The Manager at ${context.managerUrl} rejected this Worker's identity (${workerId}): ${err.message}`,
          { cause: err },
        );
      }
      throw refusedUnexpectedly("re-registration", err);
    }
  });
}

/**
 * Fresh NATS credentials for the running instance. Not retried here: the caller schedules
 * retries around the JWT's expiry. A refusal (ManagerRefusedError) means this instance is
 * over: disabled, replaced by a newer instance, or no longer known.
 */
export async function refreshCredentials(
  api: ManagerApi,
  keyPair: KeyPair,
  instance: { workerId: string; instanceId: string },
): Promise<WorkerCredentials> {
  const proof = await answeredChallenge(api, keyPair, instance.workerId, "credentials");
  return api.refreshCredentials({ protocolVersion: PROTOCOL_VERSION, ...instance, ...proof });
}

function refusedUnexpectedly(step: string, err: ManagerRefusedError): AgentExitError {
  const details = err.details.map((detail) => `${detail.path}: ${detail.message}`).join("; ");
  return new AgentExitError(
    ExitCode.UNEXPECTED,
    `The Manager refused the ${step} (HTTP ${err.status}): ${err.message}${details ? ` (${details})` : ""}. Does this agent speak the Manager's protocol version ${PROTOCOL_VERSION}?`,
    { cause: err },
  );
}

/** Runs `attempt` until it stops failing with ManagerUnavailableError or the deadline passes. */
async function untilAvailable<T>(
  context: StartupContext,
  what: string,
  attempt: (timeoutMs: number) => Promise<T>,
): Promise<T> {
  for (let failures = 0; ; failures++) {
    if (context.signal.aborted) throw new AgentStoppedError();
    const remaining = context.deadline - context.now();
    // Each request may use the time left, but no less than a second (a 0 ms timeout
    // would make the last try meaningless) and no more than the usual bound.
    const timeoutMs = Math.max(1000, Math.min(REQUEST_TIMEOUT_MS, remaining));
    try {
      return await attempt(timeoutMs);
    } catch (err) {
      if (err instanceof ManagerProtocolError) {
        throw new AgentExitError(ExitCode.UNEXPECTED, `Cannot ${what}: ${err.message}`, { cause: err });
      }
      if (!(err instanceof ManagerUnavailableError)) throw err;
      const delay = retryDelayBefore(
        context.deadline,
        context.now(),
        failures,
        DEFAULT_BACKOFF,
        context.random,
      );
      if (context.signal.aborted) throw new AgentStoppedError();
      if (delay === undefined) {
        throw new AgentExitError(
          ExitCode.MANAGER_UNREACHABLE,
          `The Manager at ${context.managerUrl} did not answer within WORKER_STARTUP_TIMEOUT_MS (${context.timeoutMs} ms, ${failures + 1} tries); last error: ${err.message}`,
          { cause: err },
        );
      }
      context.metrics?.retried("registration");
      context.logger.warn("the Manager is unavailable; retrying", {
        step: what,
        retryInMs: delay,
        err: err.message,
      });
      await sleep(delay, context.signal);
    }
  }
}
