/**
 * RP-initiated logout without the confirmation page, decided on the server. oidc-provider asks
 * before every logout (the logoutSource page, whose "yes" posts a form back). A person who
 * signs out of the Admin console and leaves that page unanswered keeps the provider's session,
 * and the next sign-in on that browser needs no password (a shared machine: someone else's
 * account). So TJM ends the session at once when the request can only come from the relying
 * party the browser is signed in to: its id_token_hint, which the provider has validated
 * (signature, issuer, audience) before logoutSource runs, is of a first-party client and names
 * this browser's session, its account (`sub`) and its sid for that client. A page of another
 * site can send the browser to the logout endpoint, but it has no such hint: the console keeps
 * its ID token on its server, and a hint of another session or account, or one without a sid,
 * gets the page, whose form that site cannot post (its xsrf value is the session's). Pure:
 * end-session.ts reads the request from oidc-provider's context and ends the session.
 */
export interface LogoutRequest {
  /** Whether the hint's client is first-party (oauth_clients.first_party: TJM's own console). */
  firstParty: boolean;
  /** The validated id_token_hint's claims; undefined when the request has no hint. */
  hint: { sub?: unknown; sid?: unknown } | undefined;
  /** The browser's provider session: its account and its sid for the hint's client. */
  session: { accountId: string | undefined; sid: string | undefined };
}

/** Whether the logout ends the session without asking (see above); otherwise the page asks. */
export function endsWithoutConfirmation({ firstParty, hint, session }: LogoutRequest): boolean {
  return (
    firstParty &&
    typeof hint?.sub === "string" &&
    hint.sub === session.accountId &&
    typeof hint.sid === "string" &&
    hint.sid === session.sid
  );
}
