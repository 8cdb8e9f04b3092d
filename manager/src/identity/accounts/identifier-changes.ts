/**
 * Changing an account's e-mail address or phone number: the new identifier takes effect only
 * once the one-time code sent to it is typed back, so nobody can give an account an address
 * they do not receive mail at. One pending change per account and channel (a new request voids
 * the previous one's code); the code is stored as its HMAC bound to the change's id, valid ten
 * minutes, and each try is counted by one conditional UPDATE before the comparison, so
 * concurrent wrong codes get at most five comparisons. On success the e-mail address the
 * account had is told. Uniqueness is the accounts table's (email_key, phone): of two accounts
 * verifying one address at once, the second commit fails on the unique index and is `taken`.
 */
import { isPgError, pgErrorCode, type Sql, type TransactionSql } from "../../platform/db.ts";
import { writeAuditEvent } from "../audit.ts";
import type { Channel, Delivery } from "../delivery/index.ts";
import { emailKey } from "../identifiers.ts";
import {
  generateOneTimeCode,
  ONE_TIME_CODE_MAX_ATTEMPTS,
  ONE_TIME_CODE_TTL_SECONDS,
  oneTimeCodeHmac,
  oneTimeCodeMatches,
} from "../one-time-codes.ts";
import { type LockedAccount, lockAccount } from "./locked-account.ts";
import { messageLocale } from "./message-locale.ts";

export type IdentifierChannel = "email" | "phone";

export interface IdentifierChangeDeps {
  sql: Sql;
  delivery: Pick<Delivery, "enqueueMessage" | "wake" | "channels">;
  oneTimeCodeKey: Buffer;
}

/** Who asks: the account, through which client, and the request's Accept-Language. */
export interface IdentifierRequester {
  accountId: string;
  clientId: string;
  acceptLanguage: string | undefined;
}

export interface AccountIdentifiers {
  email: string;
  emailVerified: boolean;
  phone: string | null;
  phoneVerified: boolean;
}

export interface PendingIdentifierChange {
  id: string;
  channel: IdentifierChannel;
  /** The e-mail address as typed (trimmed), or the phone number in E.164. */
  identifier: string;
  expiresAt: Date;
}

export type ChangeRequestOutcome =
  | { outcome: "pending"; change: PendingIdentifierChange }
  /** Another account has this identifier. */
  | { outcome: "taken" }
  /** The account has it already, verified. */
  | { outcome: "unchanged" }
  /** No transport sends to this channel (EMAIL_TRANSPORT / SMS_TRANSPORT). */
  | { outcome: "channel-unavailable" }
  | { outcome: "unknown-account" };

export type VerificationOutcome =
  | { outcome: "verified"; identifiers: AccountIdentifiers }
  /** No pending change of the account has this id (another account's, cancelled, replaced, done). */
  | { outcome: "not-found" }
  /** Its ten minutes have passed, or its five tries are spent: request a new code. */
  | { outcome: "expired" }
  | { outcome: "code-wrong"; triesLeft: number }
  | { outcome: "taken" };

const DELIVERY_CHANNEL: Record<IdentifierChannel, Channel> = { email: "email", phone: "sms" };

export async function accountIdentifiers(
  sql: Sql,
  accountId: string,
): Promise<AccountIdentifiers | undefined> {
  const [row] = await sql<AccountIdentifiers[]>`
    select email, email_verified, phone, phone_verified from accounts
    where id = ${accountId} and disabled_at is null`;
  return row;
}

export async function pendingIdentifierChanges(
  sql: Sql,
  accountId: string,
): Promise<PendingIdentifierChange[]> {
  return sql<PendingIdentifierChange[]>`
    select id, channel, identifier, expires_at from identifier_changes
    where account_id = ${accountId} and expires_at > now() and attempts < ${ONE_TIME_CODE_MAX_ATTEMPTS}
    order by channel`;
}

/** The comparable form: the e-mail key, or the E.164 number itself. */
function keyOf(channel: IdentifierChannel, identifier: string): string {
  return channel === "email" ? emailKey(identifier) : identifier;
}

async function heldByAnother(
  tx: TransactionSql,
  accountId: string,
  channel: IdentifierChannel,
  key: string,
): Promise<boolean> {
  const column = channel === "email" ? tx`email_key` : tx`phone`;
  const [row] = await tx<{ held: boolean }[]>`
    select exists (select from accounts where ${column} = ${key} and id <> ${accountId}) as held`;
  return row?.held === true;
}

function auditFailure(
  sql: Sql,
  event:
    | "account.identifier-change-requested"
    | "account.identifier-changed"
    | "account.identifier-change-cancelled",
  requester: IdentifierRequester,
  details: Record<string, string>,
): Promise<void> {
  return writeAuditEvent(sql, {
    event,
    result: "failure",
    actorAccountId: requester.accountId,
    clientId: requester.clientId,
    details: { accountId: requester.accountId, ...details },
  });
}

/**
 * Starts a change: a code to the new identifier, the previous pending change of the channel
 * replaced. `identifier` is already in its stored form (trimmed e-mail, E.164 phone). The
 * account's own identifier, still unverified, may be "changed" to itself: that verifies it.
 */
export async function requestIdentifierChange(
  deps: IdentifierChangeDeps,
  requester: IdentifierRequester,
  request: { channel: IdentifierChannel; identifier: string },
): Promise<ChangeRequestOutcome> {
  const { sql, delivery } = deps;
  const { channel, identifier } = request;
  const key = keyOf(channel, identifier);
  const outcome = await sql.begin(async (tx): Promise<ChangeRequestOutcome> => {
    const account = await lockAccount(tx, requester.accountId);
    if (!account) return { outcome: "unknown-account" };
    const current = channel === "email" ? account.emailKey : account.phone;
    const verified = channel === "email" ? account.emailVerified : account.phoneVerified;
    if (current === key && verified) return { outcome: "unchanged" };
    if (await heldByAnother(tx, account.id, channel, key)) return { outcome: "taken" };
    if (!delivery.channels.has(DELIVERY_CHANNEL[channel])) return { outcome: "channel-unavailable" };
    // The id is the challenge the code is bound to: a code of a replaced change proves nothing here.
    const id = crypto.randomUUID();
    const code = generateOneTimeCode();
    await tx`delete from identifier_changes where account_id = ${account.id} and (channel = ${channel} or expires_at <= now())`;
    const [change] = await tx<PendingIdentifierChange[]>`
      insert into identifier_changes (id, account_id, channel, identifier, code_hmac, expires_at)
      values (${id}, ${account.id}, ${channel}, ${identifier}, ${oneTimeCodeHmac(deps.oneTimeCodeKey, id, code)},
        now() + make_interval(secs => ${ONE_TIME_CODE_TTL_SECONDS}))
      returning id, channel, identifier, expires_at`;
    await delivery.enqueueMessage(tx, {
      channel: DELIVERY_CHANNEL[channel],
      recipient: identifier,
      locale: messageLocale(account.locale, requester.acceptLanguage),
      template: "verification-code",
      params: { code, minutes: ONE_TIME_CODE_TTL_SECONDS / 60 },
    });
    await writeAuditEvent(tx, {
      event: "account.identifier-change-requested",
      result: "success",
      actorAccountId: account.id,
      clientId: requester.clientId,
      details: { accountId: account.id, channel, changeId: id },
    });
    return { outcome: "pending", change: change as PendingIdentifierChange };
  });
  if (outcome.outcome === "pending") delivery.wake();
  else
    await auditFailure(sql, "account.identifier-change-requested", requester, {
      channel,
      reason: outcome.outcome,
    });
  return outcome;
}

/** Tells the account's e-mail address as it was before the change (when a transport sends e-mail). */
async function tellOldEmail(
  deps: IdentifierChangeDeps,
  tx: TransactionSql,
  account: LockedAccount,
  acceptLanguage: string | undefined,
  params: { channel: IdentifierChannel; change: "changed" | "removed" },
): Promise<boolean> {
  if (!deps.delivery.channels.has("email")) return false;
  await deps.delivery.enqueueMessage(tx, {
    channel: "email",
    recipient: account.email,
    locale: messageLocale(account.locale, acceptLanguage),
    template: "identifier-changed",
    params: { when: new Date(), ...params },
  });
  return true;
}

const identifiersOf = (row: AccountIdentifiers): AccountIdentifiers => ({
  email: row.email,
  emailVerified: row.emailVerified,
  phone: row.phone,
  phoneVerified: row.phoneVerified,
});

/**
 * Verifies the code of a pending change and applies it. A try is counted (and the change read)
 * by one statement that only succeeds while tries are left; the code is compared only then.
 */
export async function verifyIdentifierChange(
  deps: IdentifierChangeDeps,
  requester: IdentifierRequester,
  verification: { changeId: string; code: string },
): Promise<VerificationOutcome> {
  const { sql } = deps;
  const { changeId } = verification;
  const fail = async <O extends VerificationOutcome>(outcome: O, channel?: string): Promise<O> => {
    await auditFailure(sql, "account.identifier-changed", requester, {
      changeId,
      reason: outcome.outcome,
      ...(channel ? { channel } : {}),
    });
    return outcome;
  };
  const [counted] = await sql<
    { channel: IdentifierChannel; identifier: string; codeHmac: string; attempts: number }[]
  >`
    update identifier_changes set attempts = attempts + 1
    where id = ${changeId} and account_id = ${requester.accountId}
      and expires_at > now() and attempts < ${ONE_TIME_CODE_MAX_ATTEMPTS}
    returning channel, identifier, code_hmac, attempts`;
  if (!counted) {
    const [pending] = await sql`
      select from identifier_changes where id = ${changeId} and account_id = ${requester.accountId}`;
    return fail(pending ? { outcome: "expired" } : { outcome: "not-found" });
  }
  if (!oneTimeCodeMatches(deps.oneTimeCodeKey, changeId, verification.code, counted.codeHmac)) {
    return fail(
      { outcome: "code-wrong", triesLeft: ONE_TIME_CODE_MAX_ATTEMPTS - counted.attempts },
      counted.channel,
    );
  }
  const { channel, identifier } = counted;
  try {
    const outcome = await sql.begin(async (tx): Promise<VerificationOutcome & { notified?: boolean }> => {
      // The change is used once: of two right codes at once, the second finds no row.
      const used = await tx`delete from identifier_changes where id = ${changeId} returning id`;
      if (used.length === 0) return { outcome: "not-found" };
      const account = await lockAccount(tx, requester.accountId);
      if (!account) return { outcome: "not-found" };
      const [updated] =
        channel === "email"
          ? await tx<AccountIdentifiers[]>`
              update accounts set email = ${identifier}, email_key = ${emailKey(identifier)},
                email_verified = true, updated_at = now()
              where id = ${account.id} returning email, email_verified, phone, phone_verified`
          : await tx<AccountIdentifiers[]>`
              update accounts set phone = ${identifier}, phone_verified = true, updated_at = now()
              where id = ${account.id} returning email, email_verified, phone, phone_verified`;
      const changed =
        channel === "email" ? account.emailKey !== emailKey(identifier) : account.phone !== identifier;
      const notified = changed
        ? await tellOldEmail(deps, tx, account, requester.acceptLanguage, { channel, change: "changed" })
        : false;
      await writeAuditEvent(tx, {
        event: "account.identifier-changed",
        result: "success",
        actorAccountId: account.id,
        clientId: requester.clientId,
        details: { accountId: account.id, channel, changeId, changed },
      });
      return { outcome: "verified", identifiers: identifiersOf(updated as AccountIdentifiers), notified };
    });
    if (outcome.outcome !== "verified") return fail(outcome, channel);
    if (outcome.notified) deps.delivery.wake();
    return { outcome: "verified", identifiers: outcome.identifiers };
  } catch (err) {
    // The unique index decided a race for one identifier: the other account committed first.
    if (isPgError(err, pgErrorCode.uniqueViolation)) return fail({ outcome: "taken" }, channel);
    throw err;
  }
}

/** Cancels a pending change of the account: its code proves nothing from now on. */
export async function cancelIdentifierChange(
  sql: Sql,
  requester: IdentifierRequester,
  changeId: string,
): Promise<"cancelled" | "not-found"> {
  const cancelled = await sql.begin(async (tx) => {
    const [row] = await tx<{ channel: string }[]>`
      delete from identifier_changes where id = ${changeId} and account_id = ${requester.accountId}
      returning channel`;
    if (!row) return false;
    await writeAuditEvent(tx, {
      event: "account.identifier-change-cancelled",
      result: "success",
      actorAccountId: requester.accountId,
      clientId: requester.clientId,
      details: { accountId: requester.accountId, channel: row.channel, changeId },
    });
    return true;
  });
  if (cancelled) return "cancelled";
  await auditFailure(sql, "account.identifier-change-cancelled", requester, {
    changeId,
    reason: "not-found",
  });
  return "not-found";
}

/**
 * Removes the account's phone number (and any pending change to one) at once: removing needs no
 * code, only the recent sign-in the route asks for. The e-mail address is told. Removing a phone
 * the account does not have changes nothing and writes no row.
 */
export async function removePhone(
  deps: IdentifierChangeDeps,
  requester: IdentifierRequester,
): Promise<AccountIdentifiers | undefined> {
  let notified = false;
  const identifiers = await deps.sql.begin(async (tx) => {
    const account = await lockAccount(tx, requester.accountId);
    if (!account) return undefined;
    await tx`delete from identifier_changes where account_id = ${account.id} and channel = 'phone'`;
    if (account.phone === null) return identifiersOf(account);
    const [updated] = await tx<AccountIdentifiers[]>`
      update accounts set phone = null, phone_verified = false, updated_at = now()
      where id = ${account.id} returning email, email_verified, phone, phone_verified`;
    notified = await tellOldEmail(deps, tx, account, requester.acceptLanguage, {
      channel: "phone",
      change: "removed",
    });
    await writeAuditEvent(tx, {
      event: "account.identifier-changed",
      result: "success",
      actorAccountId: account.id,
      clientId: requester.clientId,
      details: { accountId: account.id, channel: "phone", removed: true },
    });
    return identifiersOf(updated as AccountIdentifiers);
  });
  if (notified) deps.delivery.wake();
  return identifiers;
}
