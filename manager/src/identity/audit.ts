/**
 * The audit trail's one writer: the only `insert into audit_events` of the code base, so every
 * row has the same shape and passes the same check. Names are `<subject>.<what happened>`. A
 * detail never holds a secret: keys that name one are refused by the type and again at run
 * time, for callers the type cannot see. Given a transaction, the row commits with the change
 * it records, or not at all.
 */
import type { Sql, TransactionSql } from "../platform/db.ts";

export const AUDIT_EVENTS = [
  "auth.sign-in",
  "auth.refresh-token-reuse",
  "auth.logout",
  "provider.key-rotated",
  "account.created",
  "account.disabled",
  "account.password-changed",
  "account.identifier-change-requested",
  "account.identifier-changed",
  "account.identifier-change-cancelled",
  "account.deleted",
  "account.role-granted",
  "account.role-revoked",
  "account.profile-updated",
  "account.avatar-upload-url-created",
  "client.created",
  "client.updated",
  "client.deleted",
  "client.secret-rotated",
  "client.grant-set",
  "client.grant-removed",
  "client.nested-added",
  "client.nested-removed",
  "client.authorization-revoked",
  "session.revoked",
  "session.others-revoked",
  "session.logged-out",
  "session.browser-logged-out",
  "mfa.enrolment-started",
  "mfa.factor-added",
  "mfa.factor-removed",
  "mfa.recovery-codes-regenerated",
  "auth.second-factor",
  "auth.second-factor-code-sent",
  "recovery.code-requested",
  "recovery.code-verified",
  "recovery.password-reset",
] as const;
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

/** Matched case-insensitively anywhere in a detail's key. */
export const SECRET_KEY_WORDS = ["password", "secret", "token", "code", "verifier"] as const;
type SecretKeyWord = (typeof SECRET_KEY_WORDS)[number];
type SecretLikeKey =
  `${string}${SecretKeyWord | Capitalize<SecretKeyWord> | Uppercase<SecretKeyWord>}${string}`;

export type AuditDetailValue = string | number | boolean | null | string[];
export type AuditDetails = Record<string, AuditDetailValue> & { [key in SecretLikeKey]?: never };

export interface AuditEntry {
  event: AuditEvent;
  result: "success" | "failure";
  actorAccountId?: string;
  clientId?: string;
  /** The client's IP address. */
  address?: string;
  details?: AuditDetails;
}

export class RefusedAuditDetailError extends Error {}

function checkDetails(details: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(details)) {
    const lowered = key.toLowerCase();
    const word = SECRET_KEY_WORDS.find((secretWord) => lowered.includes(secretWord));
    if (word) throw new RefusedAuditDetailError(`audit detail '${key}' is refused: its name says '${word}'`);
    const plain =
      value === null ||
      ["string", "number", "boolean"].includes(typeof value) ||
      (Array.isArray(value) && value.every((item) => typeof item === "string"));
    if (!plain) throw new RefusedAuditDetailError(`audit detail '${key}' is refused: not a plain value`);
  }
}

export async function writeAuditEvent(sql: Sql | TransactionSql, entry: AuditEntry): Promise<void> {
  const details = entry.details ?? {};
  checkDetails(details);
  await sql`
    insert into audit_events (event, result, actor_account_id, client_id, address, details)
    values (${entry.event}, ${entry.result}, ${entry.actorAccountId ?? null}, ${entry.clientId ?? null},
      ${entry.address ?? null}, ${sql.json(details)})`;
}
