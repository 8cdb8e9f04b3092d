/**
 * What to do with each message of the Worker's command consumer, without I/O. Commands are
 * delivered at least once (a lost ack means a redelivery), so each envelope id is handled
 * once and a repeat is only acked. A message that cannot be a command is terminated: it would
 * fail the same way on every redelivery.
 */
import { assertNever } from "@tjm/platform";
import {
  type CancelCommand,
  type Command,
  CommandEnvelopeSchema,
  decodeMessage,
  type LeaseCommand,
  type ResumeUploadsCommand,
} from "@tjm/protocol";

export type CommandDecision =
  | { action: "term"; kind: "invalid"; reason: string }
  | { action: "ack"; kind: "duplicate"; envelopeId: string; type: Command["type"] }
  | { action: "ack"; kind: "drain"; envelopeId: string }
  | { action: "ack"; kind: "undrain"; envelopeId: string }
  | { action: "ack"; kind: "lease"; envelopeId: string; command: LeaseCommand }
  | { action: "ack"; kind: "cancel"; envelopeId: string; command: CancelCommand }
  | { action: "ack"; kind: "resume-uploads"; envelopeId: string; command: ResumeUploadsCommand };

/**
 * Remembers the last `limit` envelope ids. Redeliveries come within the consumer's ack wait,
 * so a window of recent ids catches them without growing forever.
 */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly limit = 10_000) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.delete(id);
    this.ids.add(id);
    if (this.ids.size > this.limit) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
  }
}

export function decideCommand(data: Uint8Array, seen: RecentIds): CommandDecision {
  const decoded = decodeMessage(CommandEnvelopeSchema, data);
  if (!decoded.ok) return { action: "term", kind: "invalid", reason: decoded.reason };
  const { id, data: command } = decoded.value;
  if (seen.has(id)) return { action: "ack", kind: "duplicate", envelopeId: id, type: command.type };
  seen.add(id);
  switch (command.type) {
    case "drain":
      return { action: "ack", kind: "drain", envelopeId: id };
    case "undrain":
      return { action: "ack", kind: "undrain", envelopeId: id };
    case "lease":
      return { action: "ack", kind: "lease", envelopeId: id, command };
    case "cancel":
      return { action: "ack", kind: "cancel", envelopeId: id, command };
    case "resume-uploads":
      return { action: "ack", kind: "resume-uploads", envelopeId: id, command };
    default:
      return assertNever(command);
  }
}
