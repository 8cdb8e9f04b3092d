export { challengeSigningInput } from "./challenge.ts";
export { type Decoded, decodeMessage, encodeMessage, MAX_MESSAGE_BYTES } from "./codec.ts";
export {
  AUDIO_ENCODERS,
  encodersNeeded,
  PORTABLE_AUDIO_CODECS,
  PORTABLE_VIDEO_CODECS,
  type PortableAudioCodec,
  type PortableVideoCodec,
  VIDEO_ENCODERS,
} from "./encoders.ts";
export { examples, movieOutput } from "./examples.ts";
export * from "./messages.ts";
export * from "./plan.ts";
export { poolOfCapability, WORKER_POOLS, type WorkerPool } from "./pools.ts";
export {
  DEFAULT_SUBJECT_PREFIX,
  MANAGER_REPORTS_CONSUMER,
  parseWorkerSubject,
  presenceBucket,
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
