/**
 * The sessions aggregate: browsers and the accounts they remember, the provider's sessions and
 * grants (read through the adapter's indexed columns), ending them, and the back-channel logouts
 * that ending owes. The only writer of browsers, browser_sessions and backchannel_logout_outbox,
 * and of the provider's Session and Grant records outside the provider itself.
 */
export {
  BackchannelLogoutSender,
  type BackchannelLogoutSenderOptions,
  type LogoutClient,
  type LogoutClients,
  type LogoutOutcome,
  retryDelayMs,
} from "./backchannel-logout-sender.ts";
export {
  BROWSER_COOKIE,
  BROWSER_COOKIE_MAX_AGE_MS,
  browserCookieHmac,
  newBrowserCookie,
  rememberSignIn,
} from "./browsers.ts";
export {
  ClientAuthorizationNotFoundError,
  type Ended,
  type EndedSession,
  endAllSessions,
  endAllSessionsIn,
  endClientAuthorization,
  endOtherSessions,
  endSession,
  type LogoutsQueued,
  SessionNotFoundError,
} from "./end.ts";
export {
  type ClientGrants,
  type GrantSummary,
  listGrants,
  listSessions,
  type SessionSummary,
} from "./list.ts";
export { type SignedInClient, sessionSids } from "./payload.ts";
