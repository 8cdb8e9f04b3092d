/**
 * The browsers that remember accounts (tables browsers and browser_sessions). oidc-provider keeps
 * one session per browser cookie; TJM also gives the browser a long-lived cookie of its own and
 * records, per signed-in provider session, which browser holds it and for which account, so the
 * account portal can list every account one browser remembers and log each out.
 */
import { createHmac, randomBytes } from "node:crypto";
import { isIP } from "node:net";
import type { Sql, TransactionSql } from "../../platform/db.ts";

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

/** A user agent is stored cut to this many characters (the column's bound). */
export const USER_AGENT_MAX_LENGTH = 512;

/**
 * Records that the browser holding `cookie` signed `accountId` in to the provider session
 * `sessionUid`, from `clientAddress` with `userAgent`: what the account portal shows of the
 * session. One statement per table; a browser seen again keeps its row.
 */
export async function rememberSignIn(
  sql: Sql,
  signIn: {
    cookieHmac: string;
    sessionUid: string;
    accountId: string;
    clientAddress?: string | undefined;
    userAgent?: string | undefined;
  },
): Promise<void> {
  const clientAddress = signIn.clientAddress && isIP(signIn.clientAddress) ? signIn.clientAddress : null;
  const userAgent = signIn.userAgent ? signIn.userAgent.slice(0, USER_AGENT_MAX_LENGTH) : null;
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
      insert into browser_sessions (session_uid, browser_id, account_id, client_address, user_agent)
      values (${signIn.sessionUid}, ${browserId}, ${signIn.accountId}, ${clientAddress}, ${userAgent})
      on conflict (session_uid) do update set browser_id = excluded.browser_id,
        account_id = excluded.account_id, client_address = excluded.client_address,
        user_agent = excluded.user_agent, last_used_at = now()`;
  });
}

/**
 * A token refresh through the session: it was used now. The refresh comes from the client's back
 * end, so the browser's address and user agent stay as they were.
 */
export async function touchSession(sql: Sql, sessionUid: string): Promise<void> {
  await sql`update browser_sessions set last_used_at = now() where session_uid = ${sessionUid}`;
}

/** An account the browser of a session remembers, for an account switcher. */
export interface RememberedAccount {
  accountId: string;
  displayName: string;
  email: string;
  /** Its avatar's object key in AVATAR_BUCKET; null for none. */
  avatarKey: string | null;
  /** Its provider session in this browser is live (not ended, not expired). */
  signedIn: boolean;
  /** It is the account of the session asked about. */
  current: boolean;
}

/**
 * The accounts remembered by the browser that holds the session `sessionUid`, the current one
 * first, then by when each signed in there; just the session's own account when TJM did not
 * record its browser.
 */
export async function rememberedAccounts(sql: Sql, sessionUid: string): Promise<RememberedAccount[]> {
  return sql<RememberedAccount[]>`
    with here as (
      select browser_id from browser_sessions where session_uid = ${sessionUid}
    ), remembered as (
      select bs.account_id, bs.session_uid, bs.remembered_at from browser_sessions bs
      where bs.browser_id = (select browser_id from here)
      union all
      select s.account_id::uuid, s.uid, now() from oidc_records s
      where s.model = 'Session' and s.uid = ${sessionUid} and not exists (select from here)
    )
    select a.id as account_id, a.display_name, a.email, a.avatar_key,
      exists (
        select from oidc_records s
        where s.model = 'Session' and s.uid = r.session_uid and (s.expires_at is null or s.expires_at > now())
      ) as signed_in,
      r.session_uid = ${sessionUid} as current
    from remembered r join accounts a on a.id = r.account_id
    order by r.session_uid = ${sessionUid} desc, r.remembered_at, a.id`;
}

/**
 * The browser's remembered sign-ins, locked: what logging the whole browser out ends (all of
 * them, the current session's own when TJM did not record its browser), the rows forgotten.
 */
export async function forgetBrowserOf(
  tx: TransactionSql,
  sessionUid: string,
  accountId: string,
): Promise<{ accountId: string; sessionUid: string }[]> {
  const rows = await tx<{ accountId: string; sessionUid: string }[]>`
    delete from browser_sessions
    where browser_id = (select browser_id from browser_sessions where session_uid = ${sessionUid})
    returning account_id, session_uid`;
  return rows.length > 0 ? [...rows] : [{ accountId, sessionUid }];
}
