/**
 * The bounds of every message of the contract (messages.ts applies them), apart from the schemas
 * so that a reader of one bound, such as the Manager's configuration, loads no schema.
 */
export const messageLimits = {
  capacityMax: 1024,
  workerNameLength: 128,
  enrollmentTokenLengthMin: 16,
  enrollmentTokenLengthMax: 512,
  ffmpegVersionLength: 256,
  capabilities: 4096,
  /** Capability, encoder and codec names. */
  nameTokenLength: 64,
  hardwareEncoders: 32,
  reasons: 32,
  reasonLength: 512,
  urlLength: 2048,
  userJwtLength: 8192,
  heartbeatIntervalMsMin: 100,
  heartbeatIntervalMsMax: 3_600_000,
  storageRegionLength: 64,
  storageAccessKeyIdLength: 128,
  storageSecretAccessKeyLength: 1024,
  pathLength: 4096,
  /** The lease's plan, as UTF-8 JSON. */
  planBytes: 128 * 1024,
  outputs: 32,
  /**
   * Parts of the uploads one completed report hands over for a multipart commit, all outputs
   * together: the largest report stays within the codec's message size.
   */
  reportParts: 1_500,
  uploadIdLength: 256,
  etagLength: 64,
  codecsPerOutput: 16,
  failureCodeLength: 64,
  failureMessageLength: 4096,
  timestampLength: 40,
  fpsMax: 100_000,
  bitrateKbpsMax: 10_000_000,
  speedMax: 10_000,
  /** About three years; also bounds durations and ETAs. */
  durationMsMax: 100_000_000_000,
  /** Of an output's width or height, in pixels: beyond any encoder's (AV1's is 65,536). */
  frameSizeMax: 65_536,
} as const;
