import {
  type Command,
  CommandEnvelopeSchema,
  encodeMessage,
  examples,
  PROTOCOL_VERSION,
} from "@tjm/protocol";
import { describe, expect, it } from "vitest";
import { decideCommand, RecentIds } from "./commands.ts";

function envelope(id: string, data: Command): Uint8Array {
  return encodeMessage(CommandEnvelopeSchema, {
    id,
    kind: "worker.command",
    occurredAt: "2026-11-21T12:00:00.000Z",
    data,
  });
}

const ENVELOPE_A = "5f0c6a52-3f5e-4d7b-9b8e-2a1c0d4e6f70";
const ENVELOPE_B = "0e5d4c3b-2a19-4f08-8e7d-6c5b4a392817";

const drain = (id: string) => envelope(id, { type: "drain", protocolVersion: PROTOCOL_VERSION });

describe("decideCommand", () => {
  it("acks a drain", () => {
    expect(decideCommand(drain(ENVELOPE_A), new RecentIds())).toEqual({
      action: "ack",
      kind: "drain",
      envelopeId: ENVELOPE_A,
    });
  });

  it("acks an undrain", () => {
    const undrain = envelope(ENVELOPE_B, { type: "undrain", protocolVersion: PROTOCOL_VERSION });
    expect(decideCommand(undrain, new RecentIds())).toEqual({
      action: "ack",
      kind: "undrain",
      envelopeId: ENVELOPE_B,
    });
  });

  it("acks a redelivered envelope without acting on it again", () => {
    const seen = new RecentIds();
    decideCommand(drain(ENVELOPE_A), seen);
    expect(decideCommand(drain(ENVELOPE_A), seen)).toEqual({
      action: "ack",
      kind: "duplicate",
      envelopeId: ENVELOPE_A,
      type: "drain",
    });
    expect(decideCommand(drain(ENVELOPE_B), seen)).toMatchObject({ kind: "drain", envelopeId: ENVELOPE_B });
  });

  it.each([
    ["lease", examples.commands.lease],
    ["cancel", examples.commands.cancel],
    ["resume-uploads", examples.commands.resumeUploads],
  ] as const)("hands a %s command to the attempts, acked", (kind, command) => {
    expect(decideCommand(envelope(ENVELOPE_A, command), new RecentIds())).toEqual({
      action: "ack",
      kind,
      envelopeId: ENVELOPE_A,
      command,
    });
  });

  it.each([
    ["not JSON", new TextEncoder().encode("drain please"), "message is not valid JSON"],
    [
      "not an envelope",
      new TextEncoder().encode(JSON.stringify({ type: "drain" })),
      "message does not match its schema",
    ],
    [
      "another protocol version",
      new TextEncoder().encode(
        JSON.stringify({
          id: ENVELOPE_A,
          kind: "worker.command",
          occurredAt: "2026-11-21T12:00:00.000Z",
          data: { type: "drain", protocolVersion: 999 },
        }),
      ),
      "data.protocolVersion",
    ],
  ])("terminates a message that is %s", (_, bytes, reason) => {
    const decision = decideCommand(bytes, new RecentIds());
    expect(decision).toMatchObject({ action: "term", kind: "invalid" });
    expect(decision.action === "term" && decision.reason).toContain(reason);
  });
});

describe("RecentIds", () => {
  it("forgets the oldest id beyond its limit", () => {
    const ids = new RecentIds(2);
    ids.add("1");
    ids.add("2");
    ids.add("3");
    expect(["1", "2", "3"].map((id) => ids.has(id))).toEqual([false, true, true]);
  });

  it("keeps an id it saw again as the newest", () => {
    const ids = new RecentIds(2);
    ids.add("1");
    ids.add("2");
    ids.add("1");
    ids.add("3");
    expect(["1", "2", "3"].map((id) => ids.has(id))).toEqual([true, false, true]);
  });
});
