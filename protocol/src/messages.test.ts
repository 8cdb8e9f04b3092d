import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { examples } from "./examples.ts";
import {
  CertificationSchema,
  CommandSchema,
  FencingTokenSchema,
  HardwareEncoderProbeSchema,
  HeartbeatSchema,
  messageLimits as limits,
  ProgressSchema,
  ReportSchema,
  TimestampSchema,
  UuidSchema,
  WorkerChallengeRequestSchema,
  WorkerChallengeSchema,
  WorkerCredentialsRequestSchema,
  WorkerCredentialsSchema,
  WorkerRegistrationRequestSchema,
  WorkerRegistrationResponseSchema,
  WorkerReRegistrationRequestSchema,
} from "./messages.ts";

type Message = Record<string, unknown>;

interface Case {
  name: string;
  schema: z.ZodType;
  example: Message;
  optional?: string[];
}

const cases: Case[] = [
  {
    name: "registration request",
    schema: WorkerRegistrationRequestSchema,
    example: examples.workerRegistrationRequest,
  },
  {
    name: "registration response",
    schema: WorkerRegistrationResponseSchema,
    example: examples.workerRegistrationResponse,
  },
  {
    name: "challenge request",
    schema: WorkerChallengeRequestSchema,
    example: examples.workerChallengeRequest,
  },
  { name: "challenge", schema: WorkerChallengeSchema, example: examples.workerChallenge },
  {
    name: "credentials request",
    schema: WorkerCredentialsRequestSchema,
    example: examples.workerCredentialsRequest,
  },
  { name: "credentials", schema: WorkerCredentialsSchema, example: examples.workerCredentials },
  {
    name: "re-registration request",
    schema: WorkerReRegistrationRequestSchema,
    example: examples.workerReRegistrationRequest,
  },
  { name: "heartbeat", schema: HeartbeatSchema, example: examples.heartbeat },
  { name: "progress", schema: ProgressSchema, example: examples.progress },
  ...Object.entries(examples.commands).map(([name, example]) => ({
    name: `${name} command`,
    schema: CommandSchema,
    example,
  })),
  ...Object.entries(examples.reports).map(([name, example]) => ({
    name: `${name} report`,
    schema: ReportSchema,
    example,
    optional: ["manifestUri", "logsUri"].filter(
      (field) => !(name.startsWith("completed") && field === "logsUri"),
    ),
  })),
];

const valid = (schema: z.ZodType, value: unknown) => schema.safeParse(value).success;

/** A copy of `message` with the value at `path` replaced (or removed, for undefined). */
function changed(message: Message, path: (string | number)[], value: unknown): Message {
  const copy = structuredClone(message);
  let target = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>;
  const last = path.at(-1) as string | number;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

const issuePaths = (schema: z.ZodType, value: unknown) =>
  schema.safeParse(value).error?.issues.map((issue) => issue.path.join(".")) ?? [];

describe("every message", () => {
  it.each(cases)("a realistic $name is accepted as it is", ({ schema, example }) => {
    expect(schema.parse(example)).toEqual(example);
  });

  it.each(cases)(
    "a $name missing any required field is rejected at that field",
    ({ schema, example, optional }) => {
      for (const field of Object.keys(example)) {
        const message = changed(example, [field], undefined);
        if (optional?.includes(field)) expect(valid(schema, message)).toBe(true);
        else expect(issuePaths(schema, message), field).toContain(field);
      }
    },
  );

  it.each(cases)(
    "a $name with any field of the wrong type is rejected at that field",
    ({ schema, example }) => {
      for (const [field, value] of Object.entries(example)) {
        const wrong = Array.isArray(value) ? "not a list" : [];
        expect(issuePaths(schema, changed(example, [field], wrong)), field).toContain(field);
      }
    },
  );

  it.each(cases)(
    "a $name of another protocol version is rejected, saying which one this side speaks",
    ({ schema, example }) => {
      const result = schema.safeParse({ ...example, protocolVersion: 1 });
      expect(result.error?.issues[0]?.message).toBe("must be 3, the protocol version this side speaks");
    },
  );

  it.each(cases)(
    "a $name keeps its meaning when a field it does not know is added (the field is dropped)",
    ({ schema, example }) => {
      expect(schema.parse({ ...example, addedInALaterRelease: true })).toEqual(example);
    },
  );
});

describe("shared fields", () => {
  it.each([
    "3F2B8C1E-7D4A-4E59-9B2C-6A1D0E8F7C35",
    "3f2b8c1e7d4a4e599b2c6a1d0e8f7c35",
    "3f2b8c1e-7d4a-0e59-9b2c-6a1d0e8f7c35",
    "",
  ])("an id %j is not a lowercase UUID", (id) => {
    expect(valid(UuidSchema, id)).toBe(false);
  });

  it.each(["1", "42", "9223372036854775807"])("fencing token %s is accepted", (token) => {
    expect(valid(FencingTokenSchema, token)).toBe(true);
  });

  it.each([
    ["zero", "0"],
    ["a leading zero", "07"],
    ["a negative value", "-1"],
    ["a fraction", "1.5"],
    ["an exponent", "1e3"],
    ["a value past a PostgreSQL bigint", "9223372036854775808"],
    ["twenty digits", "10000000000000000000"],
    ["a JSON number", 2],
  ])("a fencing token with %s is rejected", (_, token) => {
    expect(valid(FencingTokenSchema, token)).toBe(false);
  });

  it.each(["2026-11-21T10:00:05Z", "2026-11-21T10:00:05.123456Z"])(
    "timestamp %s is accepted",
    (timestamp) => {
      expect(valid(TimestampSchema, timestamp)).toBe(true);
    },
  );

  it("a registration response may name several NATS servers, comma-separated", () => {
    const cluster = changed(
      workerRegistrationResponse,
      ["natsUrl"],
      "nats://n1:4222,tls://n2:4222,nats://n3:4222",
    );
    expect(valid(WorkerRegistrationResponseSchema, cluster)).toBe(true);
  });

  it.each(["yesterday", "2026-11-21", "2026-11-21T10:00:05+01:00", `2026-11-21T10:00:05.${"1".repeat(40)}Z`])(
    "timestamp %s is rejected",
    (timestamp) => {
      expect(valid(TimestampSchema, timestamp)).toBe(false);
    },
  );
});

const { workerRegistrationRequest, workerRegistrationResponse, heartbeat, progress } = examples;
const { lease } = examples.commands;
const { completed, failed, uploadPaused } = examples.reports;

describe("values out of range are rejected", () => {
  it.each<[string, z.ZodType, Message]>([
    [
      "a capacity cap of zero",
      WorkerRegistrationRequestSchema,
      changed(workerRegistrationRequest, ["capacityCap"], 0),
    ],
    [
      "a capacity cap over the bound",
      WorkerRegistrationRequestSchema,
      changed(workerRegistrationRequest, ["capacityCap"], limits.capacityMax + 1),
    ],
    [
      "a fractional capacity",
      WorkerRegistrationRequestSchema,
      changed(workerRegistrationRequest, ["capacityCap"], 1.5),
    ],
    ["an unknown pool", WorkerRegistrationRequestSchema, changed(workerRegistrationRequest, ["pool"], "tpu")],
    [
      "an NKey seed in place of the public key",
      WorkerRegistrationRequestSchema,
      changed(workerRegistrationRequest, ["publicKey"], `SU${"A".repeat(56)}`),
    ],
    [
      "an enrollment token with a space",
      WorkerRegistrationRequestSchema,
      changed(workerRegistrationRequest, ["enrollmentToken"], "tjm_et_ abcdefghijklmnop"),
    ],
    [
      "a short enrollment token",
      WorkerRegistrationRequestSchema,
      changed(workerRegistrationRequest, ["enrollmentToken"], "short"),
    ],
    [
      "an http NATS URL",
      WorkerRegistrationResponseSchema,
      changed(workerRegistrationResponse, ["natsUrl"], "http://nats:4222"),
    ],
    [
      "a NATS URL without a host",
      WorkerRegistrationResponseSchema,
      changed(workerRegistrationResponse, ["natsUrl"], "nats://"),
    ],
    [
      "a NATS server list with an http entry",
      WorkerRegistrationResponseSchema,
      changed(workerRegistrationResponse, ["natsUrl"], "nats://n1:4222,http://n2:4222"),
    ],
    [
      "a NATS server list with an empty entry",
      WorkerRegistrationResponseSchema,
      changed(workerRegistrationResponse, ["natsUrl"], "nats://n1:4222,,nats://n2:4222"),
    ],
    [
      "a user JWT that is not a JWT",
      WorkerRegistrationResponseSchema,
      changed(workerRegistrationResponse, ["userJwt"], "abc"),
    ],
    [
      "a heartbeat interval under 100 ms",
      WorkerRegistrationResponseSchema,
      changed(workerRegistrationResponse, ["heartbeatIntervalMs"], 99),
    ],
    ["a short nonce", WorkerChallengeSchema, changed(examples.workerChallenge, ["nonce"], "abc")],
    [
      "a signature of the wrong length",
      WorkerReRegistrationRequestSchema,
      changed(examples.workerReRegistrationRequest, ["signature"], "A".repeat(88)),
    ],
    ["a negative free capacity", HeartbeatSchema, changed(heartbeat, ["freeCapacity"], -1)],
    [
      "an active attempt with fencing token 0",
      HeartbeatSchema,
      changed(heartbeat, ["activeAttempts", 0, "fencingToken"], "0"),
    ],
    ["percent over 100", ProgressSchema, changed(progress, ["percent"], 100.5)],
    ["percent under 0", ProgressSchema, changed(progress, ["percent"], -0.1)],
    ["a negative fps", ProgressSchema, changed(progress, ["fps"], -1)],
    ["a negative speed", ProgressSchema, changed(progress, ["speed"], -1)],
    ["a fractional outTimeMs", ProgressSchema, changed(progress, ["outTimeMs"], 1.5)],
    ["an ftp storage endpoint", CommandSchema, changed(lease, ["storage", "endpoint"], "ftp://store")],
    ["a relative work directory", CommandSchema, changed(lease, ["workDirectory"], "work")],
    ["a work directory with '..'", CommandSchema, changed(lease, ["workDirectory"], "/var/lib/../etc")],
    ["a plan that is a list", CommandSchema, changed(lease, ["plan"], [])],
    ["a plan without outputs", CommandSchema, changed(lease, ["plan", "outputs"], [])],
    [
      "a plan naming an encoder instead of a portable codec",
      CommandSchema,
      changed(lease, ["plan", "outputs", 0, "video", "codec"], "libx264"),
    ],
    ["a negative output size", ReportSchema, changed(completed, ["outputs", 0, "bytes"], -1)],
    ["an uppercase checksum", ReportSchema, changed(completed, ["outputs", 0, "sha256"], "A".repeat(64))],
    [
      "an output URI that is not s3://",
      ReportSchema,
      changed(completed, ["outputs", 0, "uri"], "https://x/y.mp4"),
    ],
    ["no outputs", ReportSchema, changed(completed, ["outputs"], [])],
    ["a lowercase failure code", ReportSchema, changed(failed, ["failureCode"], "input_unreadable")],
    ["an empty failure message", ReportSchema, changed(failed, ["failureMessage"], "")],
  ])("%s", (_, schema, message) => {
    expect(valid(schema, message)).toBe(false);
  });

  it("null figures in a progress update mean ffmpeg reported N/A", () => {
    const early = { ...progress, fps: null, bitrateKbps: null, speed: null, etaSeconds: null };
    expect(valid(ProgressSchema, early)).toBe(true);
  });
});

describe("oversized messages are rejected", () => {
  const text = (length: number) => "x".repeat(length);
  it.each<[string, z.ZodType, Message]>([
    [
      "a name over its bound",
      WorkerRegistrationRequestSchema,
      changed(workerRegistrationRequest, ["name"], text(limits.workerNameLength + 1)),
    ],
    [
      "more capabilities than the bound",
      WorkerRegistrationRequestSchema,
      changed(
        workerRegistrationRequest,
        ["probe", "capabilities"],
        Array(limits.capabilities + 1).fill("libx264"),
      ),
    ],
    [
      "a capability name over its bound",
      WorkerRegistrationRequestSchema,
      changed(workerRegistrationRequest, ["probe", "capabilities", 0], text(limits.nameTokenLength + 1)),
    ],
    [
      "more hardware encoders than the bound",
      WorkerRegistrationRequestSchema,
      changed(
        workerRegistrationRequest,
        ["probe", "hardwareEncoders"],
        Array(limits.hardwareEncoders + 1).fill({ name: "h264_nvenc", status: "PASSED" }),
      ),
    ],
    [
      "more certification reasons than the bound",
      WorkerRegistrationRequestSchema,
      changed(
        workerRegistrationRequest,
        ["probe", "certification", "reasons"],
        Array(limits.reasons + 1).fill("r"),
      ),
    ],
    [
      "a user JWT over its bound",
      WorkerRegistrationResponseSchema,
      changed(workerRegistrationResponse, ["userJwt"], `a.b.${text(limits.userJwtLength)}`),
    ],
    [
      "more active attempts than the bound",
      HeartbeatSchema,
      changed(heartbeat, ["activeAttempts"], Array(limits.capacityMax + 1).fill(heartbeat.activeAttempts[0])),
    ],
    [
      "a plan over its byte bound",
      CommandSchema,
      changed(lease, ["plan", "padding"], text(limits.planBytes)),
    ],
    [
      "a secret access key over its bound",
      CommandSchema,
      changed(lease, ["storage", "secretAccessKey"], text(limits.storageSecretAccessKeyLength + 1)),
    ],
    [
      "a work directory over its bound",
      CommandSchema,
      changed(lease, ["workDirectory"], `/${text(limits.pathLength)}`),
    ],
    [
      "more outputs than the bound",
      ReportSchema,
      changed(completed, ["outputs"], Array(limits.outputs + 1).fill(completed.outputs[0])),
    ],
    [
      "more codecs on an output than the bound",
      ReportSchema,
      changed(completed, ["outputs", 0, "codecs"], Array(limits.codecsPerOutput + 1).fill("aac")),
    ],
    [
      "a failure message over its bound",
      ReportSchema,
      changed(failed, ["failureMessage"], text(limits.failureMessageLength + 1)),
    ],
    [
      "a failure code over its bound",
      ReportSchema,
      changed(failed, ["failureCode"], `E${"X".repeat(limits.failureCodeLength)}`),
    ],
    [
      "a pause reason over its bound",
      ReportSchema,
      changed(uploadPaused, ["reason"], text(limits.reasonLength + 1)),
    ],
  ])("%s", (_, schema, message) => {
    expect(valid(schema, message)).toBe(false);
  });

  it("a plan JSON cannot hold (a cycle) is rejected, not thrown on", () => {
    const plan: Message = {};
    plan.self = plan;
    expect(valid(CommandSchema, { ...lease, plan })).toBe(false);
  });
});

describe("the type of a command or report", () => {
  it.each([
    ["a command of an unknown type", CommandSchema, { ...examples.commands.cancel, type: "explode" }],
    ["a command without a type", CommandSchema, changed(examples.commands.cancel, ["type"], undefined)],
    ["a report of an unknown type", ReportSchema, { ...examples.reports.accepted, type: "exploded" }],
    ["a report without a type", ReportSchema, changed(examples.reports.accepted, ["type"], undefined)],
    ["a command sent as a report", ReportSchema, examples.commands.cancel],
    ["a report sent as a command", CommandSchema, examples.reports.accepted],
  ])("%s is rejected", (_, schema, message) => {
    expect(valid(schema, message)).toBe(false);
  });

  it("a lease with a report's fields does not pass as the report", () => {
    expect(valid(ReportSchema, { ...lease, type: "completed" })).toBe(false);
  });
});

describe("text", () => {
  it.each([
    ["a newline in a name", "encoder\n01"],
    ["an escape sequence in a name", "encoder\u001b[31m01"],
    ["an unpaired surrogate in a name", "encoder\ud800"],
    ["an empty name", ""],
  ])("%s is rejected", (_, name) => {
    expect(valid(WorkerRegistrationRequestSchema, { ...workerRegistrationRequest, name })).toBe(false);
  });

  it("a name in any script, emoji included, is accepted", () => {
    expect(
      valid(WorkerRegistrationRequestSchema, { ...workerRegistrationRequest, name: "کدگذار ۱ 🎬" }),
    ).toBe(true);
  });

  it("a failure message may span lines and hold tabs, but not other control characters", () => {
    expect(valid(ReportSchema, { ...failed, failureMessage: "line 1\n\tline 2" })).toBe(true);
    expect(valid(ReportSchema, { ...failed, failureMessage: "line 1\u0000" })).toBe(false);
  });

  it("an output URI may hold spaces and non-ASCII characters in its key", () => {
    expect(
      valid(ReportSchema, changed(completed, ["outputs", 0, "uri"], "s3://media-out/été 2024/a b.mp4")),
    ).toBe(true);
  });
});

describe("probe report", () => {
  it("a failed hardware encoder says why; a passed one needs no reason", () => {
    expect(valid(HardwareEncoderProbeSchema, { name: "h264_nvenc", status: "PASSED" })).toBe(true);
    expect(valid(HardwareEncoderProbeSchema, { name: "h264_nvenc", status: "FAILED" })).toBe(false);
    expect(valid(HardwareEncoderProbeSchema, { name: "h264_nvenc", status: "SKIPPED" })).toBe(false);
  });

  it("a DEGRADED certification gives at least one reason; READY may give none", () => {
    expect(valid(CertificationSchema, { status: "READY", reasons: [] })).toBe(true);
    expect(valid(CertificationSchema, { status: "DEGRADED", reasons: [] })).toBe(false);
    expect(
      valid(CertificationSchema, { status: "DEGRADED", reasons: ["h264_nvenc failed its self-test"] }),
    ).toBe(true);
  });
});
