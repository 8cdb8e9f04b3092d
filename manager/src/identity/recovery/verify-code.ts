/**
 * Step 2, a code typed. Counted twice before it is compared: against the limits of the
 * identifier and the address, across challenges (a new challenge buys no more guesses), and
 * against the challenge's own tries by one conditional update (identity/one-time-codes.ts). An
 * identifier no account has has a challenge too, without a code: the same statements run and
 * the same answer comes back. A right code spends the challenge for a recovery token.
 */
import { writeAuditEvent } from "../audit.ts";
import { ONE_TIME_CODE_MAX_ATTEMPTS, oneTimeCodeMatches } from "../one-time-codes.ts";
import type { RecoveryContext } from "./deps.ts";
import { deliveryChannel, type RecoveryChannel, recoveryIdentifierKey } from "./identifiers.ts";
import { countCodeTry, exchangeChallenge } from "./store.ts";
import { generateRecoveryToken, recoveryTokenHash } from "./tokens.ts";

export interface CodeVerification {
  channel: RecoveryChannel;
  identifier: string;
  code: string;
  address: string;
}

export type CodeVerificationOutcome =
  | { outcome: "verified"; recoveryToken: string; expiresInSeconds: number }
  | { outcome: "wrong-code" }
  | { outcome: "rate-limited"; retryAfterSeconds: number };

/** Compared against when there is no code, so a missing code costs what a wrong one does. */
const NO_CHALLENGE = "00000000-0000-0000-0000-000000000000";
/** An HMAC-SHA256 in hex is 64 characters: the comparison runs in full. */
const NO_CODE = "0".repeat(64);

export async function verifyCode(
  context: RecoveryContext,
  verification: CodeVerification,
): Promise<CodeVerificationOutcome> {
  const { sql, oneTimeCodeKey } = context;
  const channel = deliveryChannel(verification.channel);
  const identifierKey = recoveryIdentifierKey(verification.channel, verification.identifier);
  const failed = (reason: string) =>
    writeAuditEvent(sql, {
      event: "recovery.code-verified",
      result: "failure",
      address: verification.address,
      details: { channel, reason },
    });
  const limit = await context.limiter.code(identifierKey, verification.address);
  if (!limit.allowed) {
    await failed("rate-limited");
    return { outcome: "rate-limited", retryAfterSeconds: limit.retryAfterSeconds };
  }
  const counted = await countCodeTry(sql, identifierKey, ONE_TIME_CODE_MAX_ATTEMPTS);
  const matches = oneTimeCodeMatches(
    oneTimeCodeKey,
    counted?.id ?? NO_CHALLENGE,
    verification.code,
    counted?.codeHmac ?? NO_CODE,
  );
  if (!counted?.codeHmac || !matches) {
    await failed("wrong-code");
    return { outcome: "wrong-code" };
  }
  const recoveryToken = generateRecoveryToken();
  const exchanged = await sql.begin(async (tx) => {
    const done = await exchangeChallenge(
      tx,
      counted.id,
      recoveryTokenHash(recoveryToken),
      context.tokenTtlSeconds,
    );
    if (done) {
      await writeAuditEvent(tx, {
        event: "recovery.code-verified",
        result: "success",
        actorAccountId: done.accountId,
        address: verification.address,
        details: { channel, challengeId: counted.id },
      });
    }
    return done;
  });
  if (!exchanged) {
    await failed("challenge-spent");
    return { outcome: "wrong-code" };
  }
  return { outcome: "verified", recoveryToken, expiresInSeconds: context.tokenTtlSeconds };
}
