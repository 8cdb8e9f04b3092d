/**
 * The parts of oidc-provider's Session and Grant payloads (as its adapter stores them in
 * oidc_records) that TJM reads and rewrites: pure, no I/O. A Session is one account's sign-in in
 * one browser; `authorizations` holds, per client it signed in to, the sid that client's tokens
 * carry and the grant they were issued under.
 */

export interface SessionAuthorization {
  sid?: string;
  grantId?: string;
  persistsLogout?: boolean;
}

export interface SessionPayload {
  uid?: string;
  accountId?: string;
  /** Epoch seconds of the sign-in. */
  loginTs?: number;
  /** Epoch seconds of the provider's last save of the session (it saves when the session changes). */
  iat?: number;
  exp?: number;
  authorizations?: Record<string, SessionAuthorization>;
  [other: string]: unknown;
}

export interface GrantPayload {
  accountId?: string;
  clientId?: string;
  iat?: number;
  exp?: number;
  openid?: { scope?: string };
  resources?: Record<string, string>;
  [other: string]: unknown;
}

/** One client a session signed in to. */
export interface SignedInClient {
  clientId: string;
  /** The session as this client knows it: the `sid` of its tokens. */
  sid: string | undefined;
  /** The grant its tokens were issued under. */
  grantId: string | undefined;
}

/** The sids a Session hands out, one per client it signed in to (the adapter's `sids` column). */
export function sessionSids(payload: Pick<SessionPayload, "authorizations">): string[] {
  return Object.values(payload.authorizations ?? {}).flatMap((authorization) =>
    typeof authorization?.sid === "string" ? [authorization.sid] : [],
  );
}

export function signedInClients(payload: SessionPayload): SignedInClient[] {
  return Object.entries(payload.authorizations ?? {})
    .map(([clientId, authorization]) => ({
      clientId,
      sid: typeof authorization?.sid === "string" ? authorization.sid : undefined,
      grantId: typeof authorization?.grantId === "string" ? authorization.grantId : undefined,
    }))
    .sort((a, b) => a.clientId.localeCompare(b.clientId));
}

/** The session without `clientId`'s authorization: what the provider would keep had it logged that client out alone. */
export function withoutClient(payload: SessionPayload, clientId: string): SessionPayload {
  const { [clientId]: _removed, ...rest } = payload.authorizations ?? {};
  return { ...payload, authorizations: rest };
}

/** Epoch seconds to a Date, or undefined when the payload has no such field. */
export function epochDate(seconds: unknown): Date | undefined {
  return typeof seconds === "number" && Number.isFinite(seconds) ? new Date(seconds * 1000) : undefined;
}

/** The scopes a grant holds, OpenID ones and per resource indicator. */
export function grantScopes(payload: GrantPayload): {
  openid: string[];
  resources: Record<string, string[]>;
} {
  const split = (scope: unknown) => (typeof scope === "string" ? scope.split(" ").filter(Boolean) : []);
  return {
    openid: split(payload.openid?.scope),
    resources: Object.fromEntries(
      Object.entries(payload.resources ?? {}).map(([indicator, scope]) => [indicator, split(scope)]),
    ),
  };
}
