/**
 * Enrolling a factor: a start (a TOTP secret shown once, or a code sent to the account's verified
 * phone or e-mail address) and a verification that proves the person has it (a first TOTP code,
 * or the code sent). The first factor also creates the account's recovery codes, shown once.
 * Every outcome writes one audit row; the account's e-mail address is told of each factor added.
 */
import type { TransactionSql } from "../../platform/db.ts";
import { lockAccount } from "../accounts/index.ts";
import { messageLocale, storedLocale } from "../accounts/message-locale.ts";
import { writeAuditEvent } from "../audit.ts";
import {
  generateOneTimeCode,
  ONE_TIME_CODE_MAX_ATTEMPTS,
  ONE_TIME_CODE_TTL_SECONDS,
  oneTimeCodeHmac,
  oneTimeCodeMatches,
} from "../one-time-codes.ts";
import { endOtherSessions, type LogoutsQueued } from "../sessions/end.ts";
import { sessionUidOf } from "../sessions/list.ts";
import { newRecoveryCodes, recoveryCodeHmac } from "./recovery-codes.ts";
import { decryptFactorSecret, encryptFactorSecret } from "./secrets.ts";
import {
  type Factor,
  type FactorDeps,
  type FactorRequester,
  type FactorType,
  maskDestination,
  reserveCodeSend,
  tellFactorChanged,
  toFactor,
} from "./store.ts";
import { matchTotp, newTotpSecret, totpQrCode, totpUri } from "./totp.ts";

export type StartOutcome =
  | {
      outcome: "started";
      enrolmentId: string;
      expiresAt: Date;
      /** TOTP: the secret (base32), its otpauth:// URI and the URI as a QR code; shown this once. */
      totp?: { secret: string; uri: string; qrCode: string };
      /** SMS and e-mail: where the code went, masked. */
      maskedDestination?: string;
    }
  /** TOTP: the account has one already. SMS/e-mail: a factor with this destination exists. */
  | { outcome: "exists" }
  /** The account has no phone / its phone or e-mail address is not verified. */
  | { outcome: "destination-unverified" }
  | { outcome: "channel-unavailable" }
  | { outcome: "too-many-sends"; retryAfterSeconds: number }
  /** MFA_OPERATOR_SMS_EMAIL_ALLOWED=false and the account holds the operator role. */
  | { outcome: "refused-for-operator" }
  | { outcome: "unknown-account" };

export type EnrolOutcome =
  | {
      outcome: "enrolled";
      factor: Factor;
      /** The new recovery codes, when this was the account's first factor: shown this once. */
      recoveryCodes: string[] | undefined;
      otherSessionsEnded: number;
    }
  | { outcome: "not-found" }
  | { outcome: "expired" }
  | { outcome: "code-wrong"; triesLeft: number }
  | { outcome: "exists" };

/** The issuer authenticator apps show beside the account (MESSAGE_SERVICE_NAME). */
export interface TotpIssuer {
  issuer: string;
}

function audit(
  sql: FactorDeps["sql"] | TransactionSql,
  event: "mfa.enrolment-started" | "mfa.factor-added" | "mfa.factor-removed",
  requester: FactorRequester,
  result: "success" | "failure",
  details: Record<string, string | number | boolean>,
) {
  return writeAuditEvent(sql, {
    event,
    result,
    actorAccountId: requester.accountId,
    clientId: requester.clientId,
    details: { accountId: requester.accountId, ...details },
  });
}

export async function startEnrolment(
  deps: FactorDeps & TotpIssuer & { operatorSmsEmailAllowed: boolean },
  requester: FactorRequester,
  type: FactorType,
): Promise<StartOutcome> {
  const outcome = await deps.sql.begin(async (tx): Promise<StartOutcome> => {
    const account = await lockAccount(tx, requester.accountId);
    if (!account) return { outcome: "unknown-account" };
    const id = crypto.randomUUID();
    const expires = tx`now() + make_interval(secs => ${ONE_TIME_CODE_TTL_SECONDS})`;
    await tx`delete from mfa_enrolments where account_id = ${account.id} and (type = ${type} or expires_at <= now())`;
    if (type === "totp") {
      const [held] = await tx`select from mfa_factors where account_id = ${account.id} and type = 'totp'`;
      if (held) return { outcome: "exists" };
      const secret = newTotpSecret();
      const [row] = await tx<{ expiresAt: Date }[]>`
        insert into mfa_enrolments (id, account_id, type, secret_ciphertext, expires_at)
        values (${id}, ${account.id}, 'totp', ${encryptFactorSecret(deps.secretKey, id, secret)}, ${expires})
        returning expires_at`;
      const uri = totpUri(secret, deps.issuer, account.email);
      await audit(tx, "mfa.enrolment-started", requester, "success", { type, enrolmentId: id });
      return {
        outcome: "started",
        enrolmentId: id,
        expiresAt: (row as { expiresAt: Date }).expiresAt,
        totp: { secret, uri, qrCode: totpQrCode(uri) },
      };
    }
    if (!deps.operatorSmsEmailAllowed) {
      const [operator] = await tx`
        select from account_roles where account_id = ${account.id} and role = 'operator'`;
      if (operator) return { outcome: "refused-for-operator" };
    }
    const destination = type === "sms" ? account.phone : account.email;
    const verified = type === "sms" ? account.phoneVerified : account.emailVerified;
    if (destination === null || !verified) return { outcome: "destination-unverified" };
    const [held] = await tx`
      select from mfa_factors where account_id = ${account.id} and type = ${type} and destination = ${destination}`;
    if (held) return { outcome: "exists" };
    if (!deps.delivery.channels.has(type)) return { outcome: "channel-unavailable" };
    const send = await reserveCodeSend(tx, destination, deps.codeSendsPerHour);
    if (!send.allowed) return { outcome: "too-many-sends", retryAfterSeconds: send.retryAfterSeconds };
    const code = generateOneTimeCode();
    const [row] = await tx<{ expiresAt: Date }[]>`
      insert into mfa_enrolments (id, account_id, type, destination, code_hmac, expires_at)
      values (${id}, ${account.id}, ${type}, ${destination}, ${oneTimeCodeHmac(deps.oneTimeCodeKey, id, code)}, ${expires})
      returning expires_at`;
    await deps.delivery.enqueueMessage(tx, {
      channel: type,
      recipient: destination,
      locale: messageLocale(await storedLocale(tx, account.id), requester.acceptLanguage),
      template: "verification-code",
      params: { code, minutes: ONE_TIME_CODE_TTL_SECONDS / 60 },
    });
    await audit(tx, "mfa.enrolment-started", requester, "success", { type, enrolmentId: id });
    return {
      outcome: "started",
      enrolmentId: id,
      expiresAt: (row as { expiresAt: Date }).expiresAt,
      maskedDestination: maskDestination(type, destination) as string,
    };
  });
  if (outcome.outcome === "started") {
    if (type !== "totp") deps.delivery.wake();
  } else {
    await audit(deps.sql, "mfa.enrolment-started", requester, "failure", { type, reason: outcome.outcome });
  }
  return outcome;
}

/** Replaces the account's recovery codes with a new set, in the caller's transaction. */
export async function replaceRecoveryCodes(
  tx: TransactionSql,
  oneTimeCodeKey: Buffer,
  accountId: string,
): Promise<string[]> {
  const codes = newRecoveryCodes();
  await tx`delete from mfa_recovery_codes where account_id = ${accountId}`;
  await tx`
    insert into mfa_recovery_codes ${tx(
      codes.map((code) => ({
        account_id: accountId,
        code_hmac: recoveryCodeHmac(oneTimeCodeKey, accountId, code),
      })),
    )}`;
  return codes;
}

async function endOthersIfAsked(
  deps: FactorDeps,
  requester: FactorRequester,
  revokeOtherSessions: boolean,
  logoutsQueued: LogoutsQueued,
): Promise<number> {
  if (!revokeOtherSessions) return 0;
  const current = (await sessionUidOf(deps.sql, requester.accountId, requester.sid)) ?? "";
  const ended = await endOtherSessions(deps.sql, requester.accountId, current, logoutsQueued);
  return ended.sessions.length;
}

/**
 * Verifies an enrolment's code and adds the factor. A try is counted (and the enrolment read)
 * by one statement that only succeeds while tries are left; the code is compared only then.
 */
export async function verifyEnrolment(
  deps: FactorDeps & { logoutsQueued: LogoutsQueued },
  requester: FactorRequester,
  verification: { type: FactorType; enrolmentId: string; code: string; revokeOtherSessions: boolean },
): Promise<EnrolOutcome> {
  const { sql } = deps;
  const { enrolmentId } = verification;
  const fail = async <O extends EnrolOutcome>(outcome: O, type?: FactorType): Promise<O> => {
    await audit(sql, "mfa.factor-added", requester, "failure", {
      enrolmentId,
      reason: outcome.outcome,
      ...(type ? { type } : {}),
    });
    return outcome;
  };
  const [counted] = await sql<
    {
      type: FactorType;
      destination: string | null;
      secretCiphertext: Buffer | null;
      codeHmac: string | null;
      attempts: number;
    }[]
  >`
    update mfa_enrolments set attempts = attempts + 1
    where id = ${enrolmentId} and account_id = ${requester.accountId} and type = ${verification.type}
      and expires_at > now() and attempts < ${ONE_TIME_CODE_MAX_ATTEMPTS}
    returning type, destination, secret_ciphertext, code_hmac, attempts`;
  if (!counted) {
    const [pending] = await sql`
      select from mfa_enrolments
      where id = ${enrolmentId} and account_id = ${requester.accountId} and type = ${verification.type}`;
    return fail(pending ? { outcome: "expired" } : { outcome: "not-found" });
  }
  let secret: string | undefined;
  let timeStep: number | undefined;
  if (counted.type === "totp") {
    secret = decryptFactorSecret(deps.secretKey, enrolmentId, counted.secretCiphertext as Buffer);
    const match = await matchTotp(secret, verification.code, null);
    timeStep = match.outcome === "matched" ? match.timeStep : undefined;
  }
  const right =
    counted.type === "totp"
      ? timeStep !== undefined
      : oneTimeCodeMatches(deps.oneTimeCodeKey, enrolmentId, verification.code, counted.codeHmac as string);
  if (!right) {
    return fail(
      { outcome: "code-wrong", triesLeft: ONE_TIME_CODE_MAX_ATTEMPTS - counted.attempts },
      counted.type,
    );
  }
  const added = await sql.begin(async (tx) => {
    // Used once: of two right codes at once, the second finds no row.
    const used = await tx`delete from mfa_enrolments where id = ${enrolmentId} returning id`;
    if (used.length === 0) return { outcome: "not-found" as const };
    const account = await lockAccount(tx, requester.accountId);
    if (!account) return { outcome: "not-found" as const };
    const factorId = crypto.randomUUID();
    const [row] = await tx<
      { id: string; type: FactorType; destination: string | null; createdAt: Date; lastUsedAt: Date | null }[]
    >`
      insert into mfa_factors (id, account_id, type, destination, secret_ciphertext, last_time_step)
      values (${factorId}, ${account.id}, ${counted.type}, ${counted.destination},
        ${secret === undefined ? null : encryptFactorSecret(deps.secretKey, factorId, secret)}, ${timeStep ?? null})
      on conflict do nothing
      returning id, type, destination, created_at, last_used_at`;
    if (!row) return { outcome: "exists" as const };
    const [codes] = await tx`select from mfa_recovery_codes where account_id = ${account.id} limit 1`;
    const recoveryCodes = codes ? undefined : await replaceRecoveryCodes(tx, deps.oneTimeCodeKey, account.id);
    const notified = await tellFactorChanged(deps, tx, account, requester.acceptLanguage, {
      factor: counted.type,
      change: "added",
    });
    await audit(tx, "mfa.factor-added", requester, "success", {
      type: counted.type,
      factorId,
      enrolmentId,
      recoverySetCreated: recoveryCodes !== undefined,
    });
    return { outcome: "enrolled" as const, factor: toFactor(row), recoveryCodes, notified };
  });
  if (added.outcome !== "enrolled") return fail(added, counted.type);
  if (added.notified) deps.delivery.wake();
  const otherSessionsEnded = await endOthersIfAsked(
    deps,
    requester,
    verification.revokeOtherSessions,
    deps.logoutsQueued,
  );
  return {
    outcome: "enrolled",
    factor: added.factor,
    recoveryCodes: added.recoveryCodes,
    otherSessionsEnded,
  };
}

/**
 * Removes one of the account's factors (another account's is not found). The last factor takes
 * the recovery codes with it: the account signs in with its password alone again.
 */
export async function removeFactor(
  deps: FactorDeps & { logoutsQueued: LogoutsQueued },
  requester: FactorRequester,
  removal: { factorId: string; revokeOtherSessions: boolean },
): Promise<{ outcome: "removed"; otherSessionsEnded: number } | { outcome: "not-found" }> {
  const removed = await deps.sql.begin(async (tx) => {
    const account = await lockAccount(tx, requester.accountId);
    if (!account) return undefined;
    const [row] = await tx<{ type: FactorType }[]>`
      delete from mfa_factors where id = ${removal.factorId} and account_id = ${account.id} returning type`;
    if (!row) return undefined;
    const [left] = await tx`select from mfa_factors where account_id = ${account.id} limit 1`;
    if (!left) await tx`delete from mfa_recovery_codes where account_id = ${account.id}`;
    const notified = await tellFactorChanged(deps, tx, account, requester.acceptLanguage, {
      factor: row.type,
      change: "removed",
    });
    await audit(tx, "mfa.factor-removed", requester, "success", {
      type: row.type,
      factorId: removal.factorId,
      lastFactor: !left,
    });
    return { notified };
  });
  if (!removed) {
    await audit(deps.sql, "mfa.factor-removed", requester, "failure", {
      factorId: removal.factorId,
      reason: "not-found",
    });
    return { outcome: "not-found" };
  }
  if (removed.notified) deps.delivery.wake();
  const otherSessionsEnded = await endOthersIfAsked(
    deps,
    requester,
    removal.revokeOtherSessions,
    deps.logoutsQueued,
  );
  return { outcome: "removed", otherSessionsEnded };
}

/** A new set of recovery codes replacing the old one; refused while the account has no factor. */
export async function regenerateRecoveryCodes(
  deps: Pick<FactorDeps, "sql" | "oneTimeCodeKey">,
  requester: FactorRequester,
): Promise<{ outcome: "regenerated"; codes: string[] } | { outcome: "no-factor" }> {
  const codes = await deps.sql.begin(async (tx) => {
    const account = await lockAccount(tx, requester.accountId);
    if (!account) return undefined;
    const [factor] = await tx`select from mfa_factors where account_id = ${account.id} limit 1`;
    if (!factor) return undefined;
    const created = await replaceRecoveryCodes(tx, deps.oneTimeCodeKey, account.id);
    await writeAuditEvent(tx, {
      event: "mfa.recovery-codes-regenerated",
      result: "success",
      actorAccountId: account.id,
      clientId: requester.clientId,
      details: { accountId: account.id, count: created.length },
    });
    return created;
  });
  if (codes) return { outcome: "regenerated", codes };
  await writeAuditEvent(deps.sql, {
    event: "mfa.recovery-codes-regenerated",
    result: "failure",
    actorAccountId: requester.accountId,
    clientId: requester.clientId,
    details: { accountId: requester.accountId, reason: "no-factor" },
  });
  return { outcome: "no-factor" };
}
