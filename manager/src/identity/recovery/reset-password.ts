/**
 * Step 3, the new password. The token is looked up (unspent, unexpired, its account enabled),
 * the password checked against the one policy (with a token that names no account, against the
 * rules that need none, so every failure is reported at once), hashed, and then one transaction
 * spends the token (single use: a replay or a concurrent reset finds it spent), stores the
 * password, and with `revokeSessions` moves tokens_valid_after and ends every session and grant
 * (refresh tokens with them), and queues the notice e-mail in the request's locale. The reset
 * touches no factor and signs nobody in: a second factor is still asked at the next sign-in.
 */
import { findRecoverableAccount, storeRecoveredPassword } from "../accounts/store.ts";
import { writeAuditEvent } from "../audit.ts";
import { chooseLocale } from "../delivery/index.ts";
import { hashPassword } from "../password-hashing.ts";
import { type PasswordProblem, passwordProblems } from "../passwords.ts";
import { endSessionsIn } from "../sessions/end.ts";
import type { RecoveryContext } from "./deps.ts";
import { findUsableToken, spendToken } from "./store.ts";
import { recoveryTokenHash } from "./tokens.ts";

export interface PasswordReset {
  recoveryToken: string;
  newPassword: string;
  revokeSessions: boolean;
  address: string;
  acceptLanguage: string | undefined;
}

export type PasswordResetOutcome =
  | { outcome: "reset"; sessionsEnded: number }
  /** `problems`: the policy's refusals of the password that need no account (every failure is reported). */
  | { outcome: "token-invalid"; problems: PasswordProblem[] }
  | { outcome: "policy-refused"; problems: PasswordProblem[] }
  | { outcome: "rate-limited"; retryAfterSeconds: number };

class TokenSpentMeanwhile extends Error {}

export async function resetPassword(
  context: RecoveryContext,
  reset: PasswordReset,
): Promise<PasswordResetOutcome> {
  const { sql, delivery } = context;
  const failed = (reason: string, accountId?: string) =>
    writeAuditEvent(sql, {
      event: "recovery.password-reset",
      result: "failure",
      actorAccountId: accountId,
      address: reset.address,
      details: { reason },
    });
  const limit = await context.limiter.reset(reset.address);
  if (!limit.allowed) {
    await failed("rate-limited");
    return { outcome: "rate-limited", retryAfterSeconds: limit.retryAfterSeconds };
  }
  const tokenHash = recoveryTokenHash(reset.recoveryToken);
  const token = await findUsableToken(sql, tokenHash);
  const account = token && (await findRecoverableAccount(sql, token.accountId));
  if (!token || !account) {
    await failed("token-invalid");
    return {
      outcome: "token-invalid",
      problems: passwordProblems(reset.newPassword, { commonPasswords: context.commonPasswords }),
    };
  }
  const problems = passwordProblems(reset.newPassword, {
    email: account.email,
    commonPasswords: context.commonPasswords,
  });
  if (problems.length > 0) {
    await failed("password-policy", token.accountId);
    return { outcome: "policy-refused", problems };
  }
  const passwordHash = await hashPassword(reset.newPassword);
  const locale = chooseLocale({ acceptLanguage: reset.acceptLanguage, bodyLocale: token.locale });
  try {
    const done = await sql.begin(async (tx) => {
      const accountId = await spendToken(tx, tokenHash);
      if (accountId !== token.accountId) throw new TokenSpentMeanwhile();
      if (!(await storeRecoveredPassword(tx, accountId, passwordHash, reset.revokeSessions))) {
        throw new TokenSpentMeanwhile();
      }
      const ended = reset.revokeSessions ? await endSessionsIn(tx, accountId, "all") : undefined;
      const notified = delivery.channels.has("email");
      if (notified) {
        await delivery.enqueueMessage(tx, {
          channel: "email",
          recipient: account.email,
          locale,
          template: "password-changed",
          params: { when: new Date() },
        });
      }
      await writeAuditEvent(tx, {
        event: "recovery.password-reset",
        result: "success",
        actorAccountId: accountId,
        address: reset.address,
        details: {
          revokeSessions: reset.revokeSessions,
          sessionsEnded: ended?.sessions.length ?? 0,
          notified,
        },
      });
      return { ended, notified };
    });
    if (done.notified) delivery.wake();
    if ((done.ended?.logoutsQueued ?? 0) > 0) context.logoutsQueued();
    return { outcome: "reset", sessionsEnded: done.ended?.sessions.length ?? 0 };
  } catch (err) {
    if (!(err instanceof TokenSpentMeanwhile)) throw err;
    await failed("token-invalid", token.accountId);
    return { outcome: "token-invalid", problems: [] };
  }
}
