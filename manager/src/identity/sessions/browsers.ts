/**
 * The browsers that remember accounts (tables browsers and browser_sessions). oidc-provider keeps
 * one session per browser cookie; TJM also gives the browser a long-lived cookie of its own and
 * records, per signed-in provider session, which browser holds it and for which account, so the
 * account portal can list every account one browser remembers and log each out.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Sql } from "../../platform/db.ts";

export const BROWSER_COOKIE = "tjm_browser";
/** About 400 days, the longest lifetime Chromium keeps a cookie. */
export const BROWSER_COOKIE_MAX_AGE_MS = 400 * 86_400_000;

export function newBrowserCookie(): string {
  return randomBytes(32).toString("base64url");
}

/** The cookie's value is a bearer secret: the database keeps only its HMAC. */
export function browserCookieHmac(cookie: string, key: Buffer): string {
  return createHmac("sha256", key).update(cookie).digest("base64url");
}

/**
 * Records that the browser holding `cookie` signed `accountId` in to the provider session
 * `sessionUid`. One statement per table; a browser seen again keeps its row.
 */
export async function rememberSignIn(
  sql: Sql,
  signIn: { cookieHmac: string; sessionUid: string; accountId: string },
): Promise<void> {
  await sql.begin(async (tx) => {
    const [browser] = await tx<{ id: string }[]>`
      insert into browsers (cookie_hmac) values (${signIn.cookieHmac})
      on conflict (cookie_hmac) do update set last_seen_at = now()
      returning id`;
    const browserId = (browser as { id: string }).id;
    // A browser has one provider session per account: a newer sign-in of the account replaces it.
    await tx`delete from browser_sessions where browser_id = ${browserId} and account_id = ${signIn.accountId}
             and session_uid <> ${signIn.sessionUid}`;
    await tx`
      insert into browser_sessions (session_uid, browser_id, account_id)
      values (${signIn.sessionUid}, ${browserId}, ${signIn.accountId})
      on conflict (session_uid) do update set browser_id = excluded.browser_id, account_id = excluded.account_id`;
  });
}
