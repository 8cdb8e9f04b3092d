/**
 * The second step of a sign-in: after the password, an account with a factor proves it has one
 * (a TOTP code, a code sent by SMS or e-mail, or a recovery code). Wrong codes are limited twice,
 * each by one conditional statement counted before the code is compared (a count read and then
 * written would let concurrent guesses each read it under the limit): per factor
 * (FACTOR_FAILURE_LIMIT in the sign-in window) and per account and address by the sign-in
 * limiter the password step uses, so concurrent guesses get at most the limit's comparisons.
 * Every outcome writes one audit row.
 */
import type { Locale } from "@tjm/platform/locale";
import type { Sql } from "../../platform/db.ts";
import type { SignInLimiter } from "../accounts/sign-in-limits.ts";
import { writeAuditEvent } from "../audit.ts";
import {
  generateOneTimeCode,
  ONE_TIME_CODE_MAX_ATTEMPTS,
  ONE_TIME_CODE_TTL_SECONDS,
  oneTimeCodeHmac,
  oneTimeCodeMatches,
} from "../one-time-codes.ts";
import { recoveryCodeHmac } from "./recovery-codes.ts";
import { decryptFactorSecret } from "./secrets.ts";
import {
  type Factor,
  type FactorDeps,
  type FactorType,
  listFactors,
  recoveryCodesRemaining,
  reserveCodeSend,
} from "./store.ts";
import { matchTotp } from "./totp.ts";

/** Wrong codes one factor takes in a sign-in window before it is refused until the window ends. */
export const FACTOR_FAILURE_LIMIT = 5;

/** RFC 8176 method of each factor type; a recovery code is a one-time password too. */
export const FACTOR_AMR: Record<FactorType | "recovery", string> = {
  totp: "otp",
  sms: "sms",
  email: "email",
  recovery: "otp",
};

/**
 * The acr values the provider answers (docs/mfa.md): a password alone, or a password and a
 * second factor. Asked for as essential (the claims parameter), the second forces the factor step.
 */
export const ACR_PASSWORD = "urn:tjm:acr:password";
export const ACR_MFA = "urn:tjm:acr:mfa";
export const ACR_VALUES = [ACR_PASSWORD, ACR_MFA] as const;

export interface SignInFactorDeps extends FactorDeps {
  limiter: SignInLimiter;
  /** SIGN_IN_FAILURE_WINDOW_SECONDS: the per-factor count's window too. */
  failureWindowSeconds: number;
}

export interface SecondStep {
  factors: Factor[];
  recoveryCodesRemaining: number;
}

/**
 * The factors the account may use now; undefined when it has none (the password is enough).
 * With MFA_OPERATOR_SMS_EMAIL_ALLOWED false, an account holding the operator role is offered
 * neither its SMS nor its e-mail factors.
 */
export async function secondStepOf(
  sql: Sql,
  accountId: string,
  operatorSmsEmailAllowed: boolean,
): Promise<SecondStep | undefined> {
  const all = await listFactors(sql, accountId);
  if (all.length === 0) return undefined;
  const [operator] = operatorSmsEmailAllowed
    ? []
    : await sql`select from account_roles where account_id = ${accountId} and role = 'operator'`;
  return {
    factors: all.filter((factor) => factor.type === "totp" || !operator),
    recoveryCodesRemaining: await recoveryCodesRemaining(sql, accountId),
  };
}

export interface SignInContext {
  accountId: string;
  /** The account's e-mail address: its key is the sign-in limiter's account key. */
  email: string;
  address: string | undefined;
  clientId: string | undefined;
  locale: Locale;
}

export type SendOutcome =
  | { outcome: "sent" }
  | { outcome: "not-found" }
  | { outcome: "channel-unavailable" }
  | { outcome: "too-many-sends"; retryAfterSeconds: number };

/** Sends a sign-in code to an SMS or e-mail factor of the account, replacing its previous one. */
export async function sendSignInCode(
  deps: FactorDeps,
  context: SignInContext,
  factorId: string,
): Promise<SendOutcome> {
  const outcome = await deps.sql.begin(async (tx): Promise<SendOutcome> => {
    const [factor] = await tx<{ type: FactorType; destination: string }[]>`
      select type, destination from mfa_factors
      where id = ${factorId} and account_id = ${context.accountId} and type <> 'totp'`;
    if (!factor) return { outcome: "not-found" };
    if (!deps.delivery.channels.has(factor.type === "sms" ? "sms" : "email")) {
      return { outcome: "channel-unavailable" };
    }
    const send = await reserveCodeSend(tx, factor.destination, deps.codeSendsPerHour);
    if (!send.allowed) return { outcome: "too-many-sends", retryAfterSeconds: send.retryAfterSeconds };
    const id = crypto.randomUUID();
    const code = generateOneTimeCode();
    await tx`delete from mfa_sign_in_codes where factor_id = ${factorId}`;
    await tx`
      insert into mfa_sign_in_codes (id, factor_id, code_hmac, expires_at)
      values (${id}, ${factorId}, ${oneTimeCodeHmac(deps.oneTimeCodeKey, id, code)},
        now() + make_interval(secs => ${ONE_TIME_CODE_TTL_SECONDS}))`;
    await deps.delivery.enqueueMessage(tx, {
      channel: factor.type === "sms" ? "sms" : "email",
      recipient: factor.destination,
      locale: context.locale,
      template: "mfa-code",
      params: { code, minutes: ONE_TIME_CODE_TTL_SECONDS / 60 },
    });
    return { outcome: "sent" };
  });
  await writeAuditEvent(deps.sql, {
    event: "auth.second-factor-code-sent",
    result: outcome.outcome === "sent" ? "success" : "failure",
    actorAccountId: context.accountId,
    clientId: context.clientId,
    address: context.address,
    details: {
      accountId: context.accountId,
      factorId,
      ...(outcome.outcome === "sent" ? {} : { reason: outcome.outcome }),
    },
  });
  if (outcome.outcome === "sent") deps.delivery.wake();
  return outcome;
}

export type SecondFactorOutcome =
  | { outcome: "verified"; method: FactorType | "recovery"; amr: string[] }
  | { outcome: "code-wrong" }
  /** A TOTP code of a time step already used (the enrolment's, in the same 30 seconds). */
  | { outcome: "code-used" }
  | { outcome: "too-many-attempts"; retryAfterSeconds: number }
  /** No such factor of the account, or an SMS/e-mail factor with no live code sent. */
  | { outcome: "not-found" };

/** Counts a try against the factor; undefined when its limit is reached for this window. */
async function countFactorTry(deps: SignInFactorDeps, accountId: string, factorId: string) {
  const window = deps.sql`make_interval(secs => ${deps.failureWindowSeconds})`;
  const fresh = deps.sql`failures_window_started_at <= now() - ${window}`;
  const [row] = await deps.sql<
    {
      type: FactorType;
      secretCiphertext: Buffer | null;
      lastTimeStep: string | null;
      refusedForSeconds: number;
    }[]
  >`
    update mfa_factors set
      failures = case when ${fresh} then 1 else failures + 1 end,
      failures_window_started_at = case when ${fresh} then now() else failures_window_started_at end
    where id = ${factorId} and account_id = ${accountId}
      and (failures < ${FACTOR_FAILURE_LIMIT} or ${fresh})
    returning type, secret_ciphertext, last_time_step::text`;
  return row;
}

async function factorRefusedFor(deps: SignInFactorDeps, accountId: string, factorId: string) {
  const [row] = await deps.sql<{ seconds: number }[]>`
    select extract(epoch from failures_window_started_at + make_interval(secs => ${deps.failureWindowSeconds}) - now())::float8 as seconds
    from mfa_factors where id = ${factorId} and account_id = ${accountId}`;
  return row === undefined ? undefined : Math.max(1, Math.ceil(row.seconds));
}

/** Checks one factor's code; a right one clears the factor's count (the try was counted already). */
async function checkFactor(
  deps: SignInFactorDeps,
  context: SignInContext,
  factorId: string,
  code: string,
): Promise<SecondFactorOutcome> {
  const counted = await countFactorTry(deps, context.accountId, factorId);
  if (!counted) {
    const seconds = await factorRefusedFor(deps, context.accountId, factorId);
    return seconds === undefined
      ? { outcome: "not-found" }
      : { outcome: "too-many-attempts", retryAfterSeconds: seconds };
  }
  if (counted.type === "totp") {
    const secret = decryptFactorSecret(deps.secretKey, factorId, counted.secretCiphertext as Buffer);
    const lastStep = counted.lastTimeStep === null ? null : Number(counted.lastTimeStep);
    const match = await matchTotp(secret, code, lastStep);
    if (match.outcome === "used") return { outcome: "code-used" };
    if (match.outcome === "wrong") return { outcome: "code-wrong" };
    // The step is recorded only if it is later than the last one: of two right codes at once
    // (or one replayed), one passes, and the other was used by it.
    const [taken] = await deps.sql`
      update mfa_factors set last_time_step = ${match.timeStep}, failures = 0, last_used_at = now()
      where id = ${factorId} and (last_time_step is null or last_time_step < ${match.timeStep}) returning id`;
    return taken ? verified("totp") : { outcome: "code-used" };
  }
  const [challenge] = await deps.sql<{ id: string; codeHmac: string }[]>`
    update mfa_sign_in_codes set attempts = attempts + 1
    where factor_id = ${factorId} and expires_at > now() and attempts < ${ONE_TIME_CODE_MAX_ATTEMPTS}
    returning id, code_hmac`;
  if (!challenge) return { outcome: "not-found" };
  if (!oneTimeCodeMatches(deps.oneTimeCodeKey, challenge.id, code, challenge.codeHmac))
    return { outcome: "code-wrong" };
  const [used] = await deps.sql`delete from mfa_sign_in_codes where id = ${challenge.id} returning id`;
  if (!used) return { outcome: "code-wrong" };
  await deps.sql`update mfa_factors set failures = 0, last_used_at = now() where id = ${factorId}`;
  return verified(counted.type);
}

function verified(method: FactorType | "recovery"): SecondFactorOutcome {
  return { outcome: "verified", method, amr: ["pwd", FACTOR_AMR[method], "mfa"] };
}

/** Uses one recovery code of the account: a code used once is refused after. */
async function useRecoveryCode(
  deps: SignInFactorDeps,
  context: SignInContext,
  code: string,
): Promise<SecondFactorOutcome> {
  const [used] = await deps.sql`
    update mfa_recovery_codes set used_at = now()
    where account_id = ${context.accountId}
      and code_hmac = ${recoveryCodeHmac(deps.oneTimeCodeKey, context.accountId, code)}
      and used_at is null
    returning account_id`;
  return used ? verified("recovery") : { outcome: "code-wrong" };
}

/**
 * The second step's decision: `factorId` names a factor of the account, or "recovery" a
 * recovery code; `offered` says whether the page offered that method. Counted against the account and address first (the sign-in limiter), then
 * the factor; a right code gives the account's count back.
 */
export async function verifySecondFactor(
  deps: SignInFactorDeps,
  context: SignInContext,
  attempt: { factorId: string | "recovery"; code: string; offered: boolean },
): Promise<SecondFactorOutcome> {
  const reserved = await deps.limiter.reserve({ email: context.email, address: context.address });
  const outcome: SecondFactorOutcome = !reserved.allowed
    ? { outcome: "too-many-attempts", retryAfterSeconds: reserved.retryAfterSeconds }
    : // A method the page did not offer (an operator's SMS factor) is tried as a wrong code.
      !attempt.offered
      ? { outcome: "code-wrong" }
      : attempt.factorId === "recovery"
        ? await useRecoveryCode(deps, context, attempt.code)
        : await checkFactor(deps, context, attempt.factorId, attempt.code);
  if (reserved.allowed && outcome.outcome === "verified") await deps.limiter.succeeded(reserved.reservation);
  await writeAuditEvent(deps.sql, {
    event: "auth.second-factor",
    result: outcome.outcome === "verified" ? "success" : "failure",
    actorAccountId: context.accountId,
    clientId: context.clientId,
    address: context.address,
    details: {
      accountId: context.accountId,
      factorId: attempt.factorId,
      ...(outcome.outcome === "verified" ? { method: outcome.method } : { reason: outcome.outcome }),
    },
  });
  return outcome;
}
