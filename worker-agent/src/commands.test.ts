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

const drain = (id: string) => envelope(id, { type: "drain", protocolVersion: PROTOCOL_VERSION });

describe("decideCommand", () => {
  it("acks a drain", () => {
    expect(decideCommand(drain("41"), new RecentIds())).toEqual({
      action: "ack",
      kind: "drain",
      envelopeId: "41",
    });
  });

  it("acks a redelivered envelope without acting on it again", () => {
    const seen = new RecentIds();
    decideCommand(drain("41"), seen);
    expect(decideCommand(drain("41"), seen)).toEqual({
      action: "ack",
      kind: "duplicate",
      envelopeId: "41",
      type: "drain",
    });
    expect(decideCommand(drain("42"), seen)).toMatchObject({ kind: "drain", envelopeId: "42" });
  });

  it.each([
    ["lease", examples.commands.lease],
    ["cancel", examples.commands.cancel],
    ["resume-uploads", examples.commands.resumeUploads],
  ] as const)("hands a %s command to the attempts, acked", (kind, command) => {
    expect(decideCommand(envelope("7", command), new RecentIds())).toEqual({
      action: "ack",
      kind,
      envelopeId: "7",
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
          id: "9",
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
