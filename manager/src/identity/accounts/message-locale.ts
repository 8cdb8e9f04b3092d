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

/** The account's stored locale, or null (none chosen, or no such account). */
export async function storedLocale(sql: Sql | TransactionSql, accountId: string): Promise<string | null> {
  const [row] = await sql<{ locale: string | null }[]>`
    select locale from accounts where id = ${accountId}`;
  return row?.locale ?? null;
}
