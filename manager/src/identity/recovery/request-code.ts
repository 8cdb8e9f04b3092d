/**
 * Step 1, a code asked for. The request does the same work whatever the identifier: count the
 * limits, void the identifier's open challenge, write a new one and its audit row, commit. It
 * never looks the account up: the resolver does (resolver.ts), off the request path, and only
 * there does a code come to exist and a message go out. So the answer, its headers and its
 * timing are those of every other identifier.
 */
import { writeAuditEvent } from "../audit.ts";
import type { Locale } from "../delivery/index.ts";
import { ONE_TIME_CODE_TTL_SECONDS } from "../one-time-codes.ts";
import type { RecoveryContext } from "./deps.ts";
import { deliveryChannel, type RecoveryChannel, recoveryIdentifierKey } from "./identifiers.ts";
import { openChallenge } from "./store.ts";

export interface CodeRequest {
  channel: RecoveryChannel;
  /** Checked by identifierProblem before. */
  identifier: string;
  /** The locale the request named (Accept-Language, else its body); the account's own otherwise. */
  locale: Locale | undefined;
  address: string;
}

export type CodeRequestOutcome =
  | { outcome: "accepted" }
  | { outcome: "rate-limited"; retryAfterSeconds: number };

export async function requestCode(
  context: RecoveryContext,
  request: CodeRequest,
  resolverWake: () => void,
): Promise<CodeRequestOutcome> {
  const { sql } = context;
  const identifierKey = recoveryIdentifierKey(request.channel, request.identifier);
  const channel = deliveryChannel(request.channel);
  const limit = await context.limiter.request(identifierKey, request.address);
  if (!limit.allowed) {
    await writeAuditEvent(sql, {
      event: "recovery.code-requested",
      result: "failure",
      address: request.address,
      details: { channel, reason: "rate-limited" },
    });
    return { outcome: "rate-limited", retryAfterSeconds: limit.retryAfterSeconds };
  }
  await sql.begin(async (tx) => {
    const challengeId = await openChallenge(tx, {
      channel,
      identifierKey,
      locale: request.locale,
      ttlSeconds: ONE_TIME_CODE_TTL_SECONDS,
    });
    await writeAuditEvent(tx, {
      event: "recovery.code-requested",
      result: "success",
      address: request.address,
      details: { channel, challengeId },
    });
  });
  resolverWake();
  return { outcome: "accepted" };
}
