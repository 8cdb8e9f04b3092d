import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { decodeMessage, encodeMessage, MAX_MESSAGE_BYTES } from "./codec.ts";
import { examples } from "./examples.ts";
import {
  CommandSchema,
  HeartbeatSchema,
  messageLimits as limits,
  ProgressSchema,
  ReportSchema,
  WorkerRegistrationRequestSchema,
  WorkerRegistrationResponseSchema,
} from "./messages.ts";
import { ExecutionPlanSchema, planLimits } from "./plan.ts";

const bytesOf = (text: string) => new TextEncoder().encode(text);
const jsonBytes = (value: unknown) => bytesOf(JSON.stringify(value));

const roundTrips: [string, z.ZodType, unknown][] = [
  ["registration request", WorkerRegistrationRequestSchema, examples.workerRegistrationRequest],
  ["registration response", WorkerRegistrationResponseSchema, examples.workerRegistrationResponse],
  ["heartbeat", HeartbeatSchema, examples.heartbeat],
  ["progress", ProgressSchema, examples.progress],
  ...Object.entries(examples.commands).map(([name, command]): [string, z.ZodType, unknown] => [
    `${name} command`,
    CommandSchema,
    command,
  ]),
  ...Object.entries(examples.reports).map(([name, report]): [string, z.ZodType, unknown] => [
    `${name} report`,
    ReportSchema,
    report,
  ]),
];

const schemas = roundTrips.map(([, schema]) => schema);

describe("round trip", () => {
  it.each(roundTrips)("a %s decodes to what was encoded", (_, schema, message) => {
    expect(decodeMessage(schema, encodeMessage(schema, message))).toEqual({ ok: true, value: message });
  });

  it("encoding drops fields the schema does not know", () => {
    const bytes = encodeMessage(HeartbeatSchema, { ...examples.heartbeat, debug: "x" } as never);
    expect(JSON.parse(new TextDecoder().decode(bytes))).toEqual(examples.heartbeat);
  });
});

describe("encodeMessage", () => {
  it("refuses an invalid message, naming the field", () => {
    expect(() => encodeMessage(HeartbeatSchema, { ...examples.heartbeat, workerId: "w1" })).toThrow(
      /^refusing to send an invalid message: workerId: must be a lowercase UUID/,
    );
  });

  it(`refuses a message over ${MAX_MESSAGE_BYTES} bytes`, () => {
    expect(() => encodeMessage(z.string(), "x".repeat(MAX_MESSAGE_BYTES))).toThrow(
      /^refusing to send a message of 524290 bytes/,
    );
  });
});

describe("decodeMessage rejects, with a short reason,", () => {
  it(`a message over ${MAX_MESSAGE_BYTES} bytes, before reading it`, () => {
    expect(decodeMessage(HeartbeatSchema, new Uint8Array(MAX_MESSAGE_BYTES + 1))).toEqual({
      ok: false,
      reason: `message of ${MAX_MESSAGE_BYTES + 1} bytes exceeds ${MAX_MESSAGE_BYTES}`,
    });
  });

  it.each([
    ["a stray continuation byte", [0x80]],
    ["an invalid byte", [0x7b, 0xff, 0x7d]],
    ["an overlong encoding of '/'", [0xc0, 0xaf]],
    ["an encoded surrogate", [0xed, 0xa0, 0x80]],
    ["a truncated sequence", [0xe2, 0x82]],
  ])("bytes that are not UTF-8 (%s)", (_, bytes) => {
    expect(decodeMessage(HeartbeatSchema, new Uint8Array(bytes))).toEqual({
      ok: false,
      reason: "message is not valid UTF-8",
    });
  });

  it.each(["", "{", "{'a': 1}", "NaN", '{"a":1}{"b":2}'])("text that is not JSON (%j)", (text) => {
    expect(decodeMessage(HeartbeatSchema, bytesOf(text))).toEqual({
      ok: false,
      reason: "message is not valid JSON",
    });
  });

  it("broken JSON without quoting it, since it may hold credentials", () => {
    const result = decodeMessage(CommandSchema, bytesOf('{"secretAccessKey": "hunter2-secret'));
    expect(result).toEqual({ ok: false, reason: "message is not valid JSON" });
  });

  it("JSON that does not match the schema, naming the field", () => {
    const result = decodeMessage(HeartbeatSchema, jsonBytes({ ...examples.heartbeat, freeCapacity: -1 }));
    expect(result).toEqual({
      ok: false,
      reason: "message does not match its schema: freeCapacity: Too small: expected number to be >=0",
    });
  });

  it("JSON with many problems, naming three and counting the rest", () => {
    const result = decodeMessage(ReportSchema, jsonBytes({ type: "failed" }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/^message does not match its schema: .+ \(and \d+ more\)$/);
  });

  it("a message of another protocol version", () => {
    const result = decodeMessage(HeartbeatSchema, jsonBytes({ ...examples.heartbeat, protocolVersion: 1 }));
    expect(result).toEqual({
      ok: false,
      reason:
        "message does not match its schema: protocolVersion: must be 3, the protocol version this side speaks",
    });
  });

  it("a lease whose plan nests deeper than the stack allows", () => {
    const depth = 200_000;
    const text = JSON.stringify({ ...examples.commands.lease, plan: { nested: "NESTED" } }).replace(
      '"NESTED"',
      `${"[".repeat(depth)}${"]".repeat(depth)}`,
    );
    expect(bytesOf(text).byteLength).toBeLessThan(MAX_MESSAGE_BYTES);
    const result = decodeMessage(CommandSchema, bytesOf(text));
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.reason).toMatch(/^message (does not match its schema: plan|could not be validated)/);
  });
  it("input that a recursive schema cannot walk without exhausting the stack", () => {
    const depth = 200_000;
    expect(decodeMessage(z.json(), bytesOf(`${"[".repeat(depth)}${"]".repeat(depth)}`))).toEqual({
      ok: false,
      reason: "message could not be validated",
    });
  });
});

describe("decodeMessage never throws", () => {
  const shortReason = (result: { ok: boolean; reason?: string }) =>
    result.ok ||
    (typeof result.reason === "string" && result.reason.length > 0 && result.reason.length <= 300);

  it("on arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.constantFrom(...schemas), (bytes, schema) =>
        shortReason(decodeMessage(schema, bytes)),
      ),
    );
  });

  it("on arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(...schemas), (value, schema) =>
        shortReason(decodeMessage(schema, jsonBytes(value))),
      ),
    );
  });

  it("on a valid message with any field replaced by arbitrary JSON", () => {
    const messages = roundTrips.map(([, schema, message]) => ({
      schema,
      message: message as Record<string, unknown>,
    }));
    fc.assert(
      fc.property(
        fc.constantFrom(...messages),
        fc.nat(),
        fc.jsonValue(),
        ({ schema, message }, index, value) => {
          const fields = Object.keys(message);
          const field = fields[index % fields.length] as string;
          return shortReason(decodeMessage(schema, jsonBytes({ ...message, [field]: value })));
        },
      ),
    );
  });
});

describe("the largest message each schema accepts fits in MAX_MESSAGE_BYTES", () => {
  // "€" is three bytes of UTF-8, the most a character of bounded text can take in JSON.
  const wide = (length: number) => "€".repeat(length);
  const narrow = (length: number) => "x".repeat(length);
  const widest = (prefix: string, length: number) => prefix + wide(length - prefix.length);

  const registration = {
    ...examples.workerRegistrationRequest,
    enrollmentToken: '"'.repeat(limits.enrollmentTokenLengthMax),
    name: wide(limits.workerNameLength),
    capacityCap: limits.capacityMax,
    probe: {
      ffmpegVersion: wide(limits.ffmpegVersionLength),
      capabilities: Array(limits.capabilities).fill(narrow(limits.nameTokenLength)),
      hardwareEncoders: Array(limits.hardwareEncoders).fill({
        name: narrow(limits.nameTokenLength),
        status: "FAILED",
        reason: wide(limits.reasonLength),
      }),
      certification: { status: "DEGRADED", reasons: Array(limits.reasons).fill(wide(limits.reasonLength)) },
      capacity: limits.capacityMax,
    },
  };

  // parseS3Uri allows a key of 1024 bytes of UTF-8; '"' takes two bytes of JSON for its one.
  const location = `s3://${narrow(63)}/${'"'.repeat(1024)}`;
  const languageTag = "abc-defghijk-lmnopqrs-tuvwxyza-bcde";
  const plan = {
    input: { uri: location },
    outputs: Array.from({ length: planLimits.outputs }, (_, index) => ({
      id: `o${index}`.padEnd(64, "x"),
      kind: "FILE",
      container: "mpegts",
      destinationUri: location,
      video: { codec: "hevc", height: planLimits.heightMax, preset: "slowest" },
      audio: { codec: "opus", bitrateKbps: planLimits.audioBitrateKbpsMax },
    })),
    transforms: {
      removedSegments: Array(planLimits.removedSegments).fill({
        startMs: Number.MAX_SAFE_INTEGER,
        endMs: Number.MAX_SAFE_INTEGER,
      }),
      subtitles: Array(planLimits.subtitles).fill({ uri: location, language: languageTag, mode: "BURN_IN" }),
      audioTracks: Array(planLimits.audioTracks).fill({ streamIndex: 63, language: languageTag }),
      watermark: {
        uri: location,
        position: "bottom-right",
        marginPx: 500,
        opacity: 2.2250738585072014e-308,
        widthPercent: 99.99999999999999,
      },
    },
    workspace: { rootDirectory: widest("/", planLimits.pathLength) },
    manifestUri: location,
  };

  it("the largest plan the schema accepts is within the lease's plan bound", () => {
    expect(languageTag).toHaveLength(planLimits.languageTagLength);
    expect(ExecutionPlanSchema.safeParse(plan).error).toBeUndefined();
    expect(jsonBytes(plan).byteLength).toBeLessThanOrEqual(limits.planBytes);
  });

  const lease = {
    ...examples.commands.lease,
    plan,
    storage: {
      endpoint: `http://store/${narrow(limits.urlLength - "http://store/".length)}`,
      region: wide(limits.storageRegionLength),
      accessKeyId: wide(limits.storageAccessKeyIdLength),
      secretAccessKey: wide(limits.storageSecretAccessKeyLength),
      forcePathStyle: true,
      checksums: "WHEN_SUPPORTED",
    },
    workDirectory: widest("/", limits.pathLength),
    uploads: Array.from({ length: limits.outputs }, (_, index) => ({
      outputId: `o${index}`.padEnd(64, "x"),
      uri: widest("s3://media-out/", limits.urlLength),
    })),
    logsUri: widest("s3://media-out/", limits.urlLength),
  };

  const uri = widest("s3://media-out/", limits.urlLength);
  // The report's parts spread over every output, part numbers of five digits.
  const partsOf = (index: number) =>
    Math.floor(limits.reportParts / limits.outputs) + (index < limits.reportParts % limits.outputs ? 1 : 0);
  const completed = {
    ...examples.reports.completed,
    outputs: Array.from({ length: limits.outputs }, (_, index) => ({
      id: `o${index}`.padEnd(64, "x"),
      uri,
      bytes: Number.MAX_SAFE_INTEGER,
      sha256: "f".repeat(64),
      durationMs: limits.durationMsMax,
      codecs: Array(limits.codecsPerOutput).fill(narrow(limits.nameTokenLength)),
      multipart: {
        uploadId: "u".repeat(limits.uploadIdLength),
        parts: Array.from({ length: partsOf(index) }, (_, part) => ({
          partNumber: 10_000 - part,
          etag: `"${"e".repeat(limits.etagLength)}"`,
          bytes: Number.MAX_SAFE_INTEGER,
        })),
      },
    })),
    logsUri: uri,
  };

  const heartbeat = {
    ...examples.heartbeat,
    activeAttempts: Array(limits.capacityMax).fill({
      attemptId: examples.heartbeat.activeAttempts[0]?.attemptId,
      fencingToken: "9223372036854775807",
    }),
  };

  const failed = {
    ...examples.reports.failed,
    failureCode: `E${"X".repeat(limits.failureCodeLength - 1)}`,
    failureMessage: wide(limits.failureMessageLength),
    logsUri: uri,
  };

  it.each<[string, z.ZodType, unknown]>([
    ["registration request", WorkerRegistrationRequestSchema, registration],
    ["lease", CommandSchema, lease],
    ["completed report", ReportSchema, completed],
    ["failed report", ReportSchema, failed],
    ["heartbeat", HeartbeatSchema, heartbeat],
  ])("%s", (_, schema, message) => {
    expect(schema.safeParse(message).error).toBeUndefined();
    expect(encodeMessage(schema, message).byteLength).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
  });
});
