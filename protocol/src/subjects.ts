/**
 * NATS subjects, JetStream stream names and consumer names of the Manager <-> Worker
 * contract. Everything is derived from a subject prefix: "tjm" in production, another one
 * per test run so runs sharing a nats-server never see each other's messages or streams.
 *
 *   <prefix>.workers.<workerId>.heartbeat|progress   core NATS, not stored
 *   <prefix>.workers.<workerId>.commands             stream <PREFIX>_COMMANDS
 *   <prefix>.workers.<workerId>.reports              stream <PREFIX>_REPORTS
 *   <prefix>.events.<kind>                           stream <PREFIX>_EVENTS
 *
 * Builders validate what they are given and throw on a bad prefix, id or kind: such a
 * value is a programming error, and a subject built from it could match more than meant
 * (a "*" or ">" token) or fall outside a Worker's permissions.
 */
import { UUID_PATTERN } from "./uuid.ts";

export const DEFAULT_SUBJECT_PREFIX = "tjm";

/**
 * One NATS token of lowercase letters, digits, "_" and "-", starting with a letter. Stream
 * names are the upper-cased prefix, so lowercase-only keeps two prefixes from sharing streams
 * ("tjm" and "TJM" would both be TJM_COMMANDS), and the character set is valid in both a
 * subject token and a stream name (no spaces, ".", "*", ">", path separators).
 */
export const PREFIX_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/** Dot-separated lowercase words such as "job.created"; each word a valid subject token. */
const EVENT_KIND_PATTERN = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*$/;
const EVENT_KIND_MAX_LENGTH = 64;

export const WORKER_CHANNELS = ["heartbeat", "progress", "commands", "reports"] as const;
export type WorkerChannel = (typeof WORKER_CHANNELS)[number];

/** The durable consumer on <PREFIX>_REPORTS that every Manager replica shares. */
export const MANAGER_REPORTS_CONSUMER = "manager-reports";

const quoted = (value: string) => JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);

function checkedPrefix(prefix: string): string {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new Error(
      `subject prefix ${quoted(prefix)} is invalid: it must be 1 to 32 lowercase letters, digits, '_' or '-', starting with a letter`,
    );
  }
  return prefix;
}

function checkedWorkerId(workerId: string): string {
  if (!UUID_PATTERN.test(workerId)) throw new Error(`worker id ${quoted(workerId)} is not a lowercase UUID`);
  return workerId;
}

function checkedEventKind(kind: string): string {
  if (kind.length > EVENT_KIND_MAX_LENGTH || !EVENT_KIND_PATTERN.test(kind)) {
    throw new Error(
      `event kind ${quoted(kind)} is invalid: it must be dot-separated lowercase words such as "job.created", at most ${EVENT_KIND_MAX_LENGTH} characters`,
    );
  }
  return kind;
}

const workerSubject = (prefix: string, workerId: string, channel: WorkerChannel) =>
  `${checkedPrefix(prefix)}.workers.${checkedWorkerId(workerId)}.${channel}`;
const allWorkersSubject = (prefix: string, channel: WorkerChannel) =>
  `${checkedPrefix(prefix)}.workers.*.${channel}`;

export const subjects = {
  workerHeartbeat: (prefix: string, workerId: string) => workerSubject(prefix, workerId, "heartbeat"),
  workerProgress: (prefix: string, workerId: string) => workerSubject(prefix, workerId, "progress"),
  workerCommands: (prefix: string, workerId: string) => workerSubject(prefix, workerId, "commands"),
  workerReports: (prefix: string, workerId: string) => workerSubject(prefix, workerId, "reports"),
  event: (prefix: string, kind: string) => `${checkedPrefix(prefix)}.events.${checkedEventKind(kind)}`,

  allWorkerHeartbeats: (prefix: string) => allWorkersSubject(prefix, "heartbeat"),
  allWorkerProgress: (prefix: string) => allWorkersSubject(prefix, "progress"),
  allWorkerCommands: (prefix: string) => allWorkersSubject(prefix, "commands"),
  allWorkerReports: (prefix: string) => allWorkersSubject(prefix, "reports"),
  allEvents: (prefix: string) => `${checkedPrefix(prefix)}.events.>`,
};

export interface StreamDefinition {
  name: string;
  subjects: string[];
}

/** The three JetStream streams of one prefix, each with the subjects it stores. */
export function streams(prefix: string): Record<"commands" | "reports" | "events", StreamDefinition> {
  const name = checkedPrefix(prefix).toUpperCase();
  return {
    commands: { name: `${name}_COMMANDS`, subjects: [subjects.allWorkerCommands(prefix)] },
    reports: { name: `${name}_REPORTS`, subjects: [subjects.allWorkerReports(prefix)] },
    events: { name: `${name}_EVENTS`, subjects: [subjects.allEvents(prefix)] },
  };
}

/**
 * The KV bucket in which the Managers of the installation that holds the prefix keep their
 * presence record (`tjm` → `TJM_PRESENCE`, stored in the stream `KV_TJM_PRESENCE`).
 */
export function presenceBucket(prefix: string): string {
  return `${checkedPrefix(prefix).toUpperCase()}_PRESENCE`;
}

/**
 * The Worker's durable consumer on <PREFIX>_COMMANDS. The prefix is not part of the name:
 * consumer names are scoped to their stream, which already carries it.
 */
export function workerConsumerName(workerId: string): string {
  return `worker-${checkedWorkerId(workerId)}`;
}

/**
 * The inbox prefix a Worker connects with (the client's `inboxPrefix` option), so its
 * credentials can allow subscribing to `<inbox prefix>.>` and nothing else: replies to its
 * JetStream pull requests arrive there.
 */
export function workerInboxPrefix(prefix: string, workerId: string): string {
  return `_INBOX.${checkedPrefix(prefix)}.${checkedWorkerId(workerId)}`;
}

/**
 * The Worker and channel a received subject names, or undefined when it is not a Worker
 * subject of this prefix. NATS permissions vouch for the subject, not the body: a receiver
 * compares this workerId with the one in the message before believing the message.
 */
export function parseWorkerSubject(
  prefix: string,
  subject: string,
): { workerId: string; channel: WorkerChannel } | undefined {
  const tokens = subject.split(".");
  if (tokens.length !== 4) return undefined;
  const [subjectPrefix, workers, workerId, channel] = tokens as [string, string, string, string];
  if (subjectPrefix !== checkedPrefix(prefix) || workers !== "workers") return undefined;
  if (!UUID_PATTERN.test(workerId)) return undefined;
  if (!(WORKER_CHANNELS as readonly string[]).includes(channel)) return undefined;
  return { workerId, channel: channel as WorkerChannel };
}
