/**
 * Messages travel as UTF-8 JSON. A sender validates before encoding, so it never sends what
 * the other side would drop. A receiver decodes without ever throwing: whatever arrives
 * (oversized, not UTF-8, not JSON, not the schema) yields a short reason, so it can log
 * the message, count it and drop it (JetStream: term) and go on.
 */
import type { z } from "zod";

/**
 * Largest message either side sends or accepts: half NATS's default max_payload (1 MiB),
 * and above the largest message the schemas accept (a registration with every capability
 * and reason at its bound).
 */
export const MAX_MESSAGE_BYTES = 512 * 1024;

export type Decoded<T> = { ok: true; value: T } | { ok: false; reason: string };

const REASON_MAX_LENGTH = 300;
const ISSUES_IN_REASON = 3;

const encoder = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** JSON bytes of a valid message; throws on an invalid or oversized one, which is a bug of the sender. */
export function encodeMessage<Schema extends z.ZodType>(schema: Schema, value: z.input<Schema>): Uint8Array {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new Error(`refusing to send an invalid message: ${describeIssues(parsed.error)}`);
  const bytes = encoder.encode(JSON.stringify(parsed.data));
  if (bytes.byteLength > MAX_MESSAGE_BYTES) {
    throw new Error(`refusing to send a message of ${bytes.byteLength} bytes (at most ${MAX_MESSAGE_BYTES})`);
  }
  return bytes;
}

export function decodeMessage<Schema extends z.ZodType>(
  schema: Schema,
  bytes: Uint8Array,
): Decoded<z.output<Schema>> {
  if (bytes.byteLength > MAX_MESSAGE_BYTES) {
    return rejected(`message of ${bytes.byteLength} bytes exceeds ${MAX_MESSAGE_BYTES}`);
  }
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return rejected("message is not valid UTF-8");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // The parser's own message quotes the input, which may hold credentials.
    return rejected("message is not valid JSON");
  }
  try {
    const parsed = schema.safeParse(json);
    if (parsed.success) return { ok: true, value: parsed.data };
    return rejected(`message does not match its schema: ${describeIssues(parsed.error)}`);
  } catch {
    // Validation walks nested input; a pathological nesting depth can exhaust the stack.
    return rejected("message could not be validated");
  }
}

function rejected(reason: string): { ok: false; reason: string } {
  return {
    ok: false,
    reason: reason.length > REASON_MAX_LENGTH ? `${reason.slice(0, REASON_MAX_LENGTH - 1)}…` : reason,
  };
}

function describeIssues(error: z.ZodError): string {
  const described = error.issues
    .slice(0, ISSUES_IN_REASON)
    .map((issue) => `${issue.path.map(String).join(".") || "(message)"}: ${issue.message}`);
  const more = error.issues.length - ISSUES_IN_REASON;
  return more > 0 ? `${described.join("; ")} (and ${more} more)` : described.join("; ");
}
