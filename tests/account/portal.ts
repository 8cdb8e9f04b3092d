/**
 * What the account portal's tests share: a portal client, an account signed in to it (in a
 * browser of its own or a given one), raw requests with its token, and the audit rows written.
 */
import type { BrowserSession, SignInResult } from "@tjm/devstack/oidc-client";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import type { Sql } from "../../manager/src/platform/db.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import type { TestManager } from "../harness/manager.ts";

export const PORTAL_RESOURCE = resourceIndicator(ACCOUNT_PORTAL_AUDIENCE);

export class Portal {
  private constructor(
    readonly manager: TestManager,
    readonly client: TestClient,
  ) {}

  static async start(manager: TestManager, name = "Account portal"): Promise<Portal> {
    return new Portal(
      manager,
      await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE], name }),
    );
  }

  account(): Promise<TestAccount> {
    return createTestAccount(this.manager.sql);
  }

  /** A sign-in to the portal: in `browser` (its provider session) or in a new browser. */
  signIn(account: TestAccount, browser?: BrowserSession, client = this.client): Promise<SignInResult> {
    return signInAs(
      this.manager.issuerUrl,
      client,
      account,
      PORTAL_RESOURCE,
      "openid offline_access",
      browser,
    );
  }

  /** A request to `path` with `token` (none: no authorization header) on `baseUrl` (this Manager by default). */
  request(
    token: string | undefined,
    method: string,
    path: string,
    body?: unknown,
    baseUrl = this.manager.baseUrl,
  ): Promise<Response> {
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    return fetch(`${baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** GET /api/v1/me/sessions: the status a token gets on its next request (200 while it stands). */
  async answer(tokens: { accessToken: string }, baseUrl?: string): Promise<number> {
    const response = await this.request(tokens.accessToken, "GET", "/api/v1/me/sessions", undefined, baseUrl);
    await response.body?.cancel();
    return response.status;
  }
}

/** The uid of the provider session a token's sid belongs to. */
export async function sessionUid(sql: Sql, tokens: SignInResult): Promise<string> {
  const [row] = await sql<{ uid: string }[]>`
    select uid from oidc_records where model = 'Session' and sids @> array[${tokens.claims.sid as string}::text]`;
  return (row as { uid: string }).uid;
}

/** The audit rows an account wrote for `event`, oldest first. */
export function auditRows(sql: Sql, accountId: string, event: string) {
  return sql<{ result: string; clientId: string | null; details: Record<string, unknown> }[]>`
    select result, client_id, details from audit_events
    where actor_account_id = ${accountId} and event = ${event} order by id`;
}
