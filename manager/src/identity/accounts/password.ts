/**
 * Changing an account's password: the current one proves who asks, the new one meets the one
 * password policy (identity/passwords.ts). Every outcome writes one audit row.
 *
 * Two callers, two ways to end what the old password got: revokeTokens refuses every token
 * issued until now (tokens_valid_after); the account portal keeps the session it is used from
 * and ends the others itself, when asked (identity/sessions/end.ts). With a limiter, a wrong
 * current password counts toward the account's sign-in limit, as a wrong sign-in does: a stolen
 * access token is not a way around that limit.
 */
import type { Sql, TransactionSql } from "../../platform/db.ts";
import { writeAuditEvent } from "../audit.ts";
import type { Delivery } from "../delivery/index.ts";
import { hashPassword, verifyPassword } from "../password-hashing.ts";
import { type PasswordProblem, passwordProblems } from "../passwords.ts";
import { endOtherSessions, type LogoutsQueued } from "../sessions/end.ts";
import { sessionUidOf } from "../sessions/list.ts";
import { messageLocale, storedLocale } from "./message-locale.ts";
import type { SignInLimiter } from "./sign-in-limits.ts";
import { findAccount, findSignInCandidate, storeChangedPassword } from "./store.ts";

export interface PasswordChange {
  accountId: string;
  currentPassword: string;
  newPassword: string;
}

export interface PasswordChangeOptions {
  commonPasswords: ReadonlySet<string>;
  /** Refuse every token issued before the change (the default). */
  revokeTokens?: boolean;
  /** Counts a wrong current password against the account's sign-in limit. */
  limiter?: SignInLimiter;
  /** The client the change came through, for the audit row. */
  clientId?: string;
  /** Runs in the change's transaction: the notice that tells the account. */
  onChanged?: (tx: TransactionSql, account: { id: string; email: string }) => Promise<void>;
}

export type PasswordChangeOutcome =
  | { outcome: "changed" }
  | { outcome: "unknown-account" }
  | { outcome: "current-password-wrong" }
  | { outcome: "too-many-attempts"; retryAfterSeconds: number }
  | { outcome: "policy-refused"; problems: PasswordProblem[] };

export async function changePassword(
  sql: Sql,
  change: PasswordChange,
  settings: PasswordChangeOptions,
): Promise<PasswordChangeOutcome> {
  const account = await findAccount(sql, change.accountId);
  if (!account || account.disabled) return { outcome: "unknown-account" };
  const refuse = async <O extends PasswordChangeOutcome>(outcome: O, reason: string): Promise<O> => {
    await writeAuditEvent(sql, {
      event: "account.password-changed",
      result: "failure",
      actorAccountId: account.id,
      clientId: settings.clientId,
      details: { accountId: account.id, reason },
    });
    return outcome;
  };
  // The policy first: a new password that cannot be set spends none of the account's tries.
  const problems = passwordProblems(change.newPassword, {
    email: account.email,
    commonPasswords: settings.commonPasswords,
  });
  if (problems.length > 0) return refuse({ outcome: "policy-refused", problems }, "policy-refused");
  const reserved = await settings.limiter?.reserve({ email: account.email, address: undefined });
  if (reserved && !reserved.allowed) {
    return refuse(
      { outcome: "too-many-attempts", retryAfterSeconds: reserved.retryAfterSeconds },
      "too-many-attempts",
    );
  }
  const candidate = await findSignInCandidate(sql, account.email);
  if (!candidate?.passwordHash || !(await verifyPassword(candidate.passwordHash, change.currentPassword))) {
    return refuse({ outcome: "current-password-wrong" }, "current-password-wrong");
  }
  if (reserved) await settings.limiter?.succeeded(reserved.reservation);
  await storeChangedPassword(sql, account.id, await hashPassword(change.newPassword), {
    revokeTokens: settings.revokeTokens ?? true,
    clientId: settings.clientId,
    onChanged: (tx) => settings.onChanged?.(tx, account) ?? Promise.resolve(),
  });
  return { outcome: "changed" };
}

export interface OwnPasswordChangeDeps {
  sql: Sql;
  delivery: Pick<Delivery, "enqueueMessage" | "wake" | "channels">;
  limiter: SignInLimiter;
  commonPasswords: ReadonlySet<string>;
  /** The back-channel logout sender's wake (identity/sessions/end.ts). */
  logoutsQueued: LogoutsQueued;
}

export interface OwnPasswordChange extends PasswordChange {
  /** The client and sign-in session (the token's sid) the change comes through: that session stays. */
  clientId: string;
  sid: string;
  revokeOtherSessions: boolean;
  acceptLanguage: string | undefined;
}

/**
 * An account changing its own password (the portal): counted against its sign-in limit, told by
 * e-mail in its locale in the change's transaction, and, when asked, every other session of the
 * account ended (grants, refresh tokens, back-channel logout) while this one stays.
 */
export async function changeOwnPassword(
  deps: OwnPasswordChangeDeps,
  change: OwnPasswordChange,
): Promise<
  Exclude<PasswordChangeOutcome, { outcome: "changed" }> | { outcome: "changed"; otherSessionsEnded: number }
> {
  const { sql, delivery } = deps;
  const outcome = await changePassword(sql, change, {
    commonPasswords: deps.commonPasswords,
    revokeTokens: false,
    limiter: deps.limiter,
    clientId: change.clientId,
    async onChanged(tx, account) {
      if (!delivery.channels.has("email")) return;
      await delivery.enqueueMessage(tx, {
        channel: "email",
        recipient: account.email,
        locale: messageLocale(await storedLocale(tx, account.id), change.acceptLanguage),
        template: "password-changed",
        params: { when: new Date() },
      });
    },
  });
  if (outcome.outcome !== "changed") return outcome;
  delivery.wake();
  if (!change.revokeOtherSessions) return { outcome: "changed", otherSessionsEnded: 0 };
  // The standing check found this session live; were it gone since, every session ends.
  const current = (await sessionUidOf(sql, change.accountId, change.sid)) ?? "";
  const ended = await endOtherSessions(sql, change.accountId, current, deps.logoutsQueued);
  return { outcome: "changed", otherSessionsEnded: ended.sessions.length };
}
