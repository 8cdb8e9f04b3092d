import type { TransactionSql } from "../../platform/db.ts";
import type { AccountIdentifiers } from "./identifier-changes.ts";

export interface LockedAccount extends AccountIdentifiers {
  id: string;
  emailKey: string;
  /** The account's stored locale, null when none was chosen. */
  locale: string | null;
}

/**
 * An enabled account's identifiers and stored locale, its row locked until the transaction
 * ends, for a change that depends on them (an identifier change, a factor's enrolment).
 * Undefined when the account does not exist or is disabled.
 */
export async function lockAccount(tx: TransactionSql, accountId: string): Promise<LockedAccount | undefined> {
  const [row] = await tx<LockedAccount[]>`
    select id, email, email_key, email_verified, phone, phone_verified, locale
    from accounts where id = ${accountId} and disabled_at is null
    for update`;
  return row;
}
