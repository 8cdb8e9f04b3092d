export { challengeSigningInput } from "./challenge.ts";
export { type Decoded, decodeMessage, encodeMessage, MAX_MESSAGE_BYTES } from "./codec.ts";
export { examples } from "./examples.ts";
export * from "./messages.ts";
export { poolOfCapability, WORKER_POOLS, type WorkerPool } from "./pools.ts";
export {
  DEFAULT_SUBJECT_PREFIX,
  MANAGER_REPORTS_CONSUMER,
  parseWorkerSubject,
  type StreamDefinition,
  streams,
  subjects,
  WORKER_CHANNELS,
  type WorkerChannel,
  workerConsumerName,
  workerInboxPrefix,
} from "./subjects.ts";
export { UUID_PATTERN } from "./uuid.ts";
export { PROTOCOL_VERSION } from "./version.ts";
