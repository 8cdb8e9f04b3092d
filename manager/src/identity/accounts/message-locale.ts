/**
 * The locale of a message to an account (a code, a notice): the account's own stored locale,
 * else the request's Accept-Language, else English.
 */

import { chooseLocale, type Locale, resolveLocale } from "@tjm/platform/locale";
import type { Sql, TransactionSql } from "../../platform/db.ts";

export function messageLocale(
  accountLocale: string | null | undefined,
  acceptLanguage: string | undefined,
): Locale {
  return (accountLocale ? resolveLocale(accountLocale) : undefined) ?? chooseLocale({ acceptLanguage });
}

/**
 * The account's stored locale, or null. `to_jsonb(a) ->> 'locale'` reads the column where the
 * schema has one and null where it does not yet, without naming it.
 */
export async function storedLocale(sql: Sql | TransactionSql, accountId: string): Promise<string | null> {
  const [row] = await sql<{ locale: string | null }[]>`
    select to_jsonb(a) ->> 'locale' as locale from accounts a where a.id = ${accountId}`;
  return row?.locale ?? null;
}
