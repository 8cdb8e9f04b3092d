/**
 * The account portal's snapshot, GET /api/v1/me, on one Manager on Node serving its provider:
 * an account with 10 live sign-in sessions and 20 connected apps (clients it granted), one
 * caller with the account's account-portal token, closed loop.
 */
import { randomBytes } from "node:crypto";
import { BrowserSession, signIn } from "@tjm/devstack/oidc-client";
import { freePort } from "@tjm/devstack/services";
import { resourceIndicator } from "../../manager/src/identity/resources.ts";
import type { BenchContext } from "../scenario.ts";
import { loadOptions } from "../settings.ts";
import { closedLoop, HttpClient, type LoadResult } from "../shared/load.ts";
import {
  createAccount,
  createClient,
  freshManagerSchema,
  startManager,
  withProvider,
} from "../shared/manager-process.ts";

export const SESSIONS = 10;
export const CONNECTED_APPS = 20;
const EMAIL = "portal@bench.tjm.local";
const REDIRECT_URI = "http://127.0.0.1:9/callback";
const PORTAL_RESOURCE = resourceIndicator("account-portal");
/** `clients create` runs at a time: each is an npm and Node start. */
const CLIENTS_AT_ONCE = 5;

export interface PortalResult {
  /** What the snapshot said, and what the provider's records hold: the set-up as measured. */
  sessionCount: number;
  grantedClients: number;
  me: LoadResult;
}

export async function benchPortal(context: BenchContext): Promise<PortalResult> {
  const { schema, env: withoutProvider } = await freshManagerSchema(context, "portal");
  const port = await freePort();
  const env = withProvider(withoutProvider, port);
  const password = randomBytes(18).toString("base64url");
  await createAccount(env, { email: EMAIL, password, roles: [] });
  const clientIds: string[] = [];
  for (let index = 0; index < CONNECTED_APPS; index += CLIENTS_AT_ONCE) {
    const batch = Array.from({ length: Math.min(CLIENTS_AT_ONCE, CONNECTED_APPS - index) }, (_, offset) =>
      createClient(env, [
        ...["--name", `bench app ${index + offset + 1}`, "--first-party", "--public"],
        ...["--redirect-uri", REDIRECT_URI, "--resource", "account-portal"],
        ...["--grant", "authorization_code", "--grant", "refresh_token"],
      ]),
    );
    clientIds.push(...(await Promise.all(batch)).map((client) => client.clientId));
  }
  const manager = await startManager("node", env, context.cleanup, {}, { port });
  try {
    const signInWith = (clientId: string, session: BrowserSession) =>
      signIn({
        issuer: env.OIDC_ISSUER_URL,
        clientId,
        redirectUri: REDIRECT_URI,
        resource: PORTAL_RESOURCE,
        scope: "openid offline_access",
        email: EMAIL,
        password,
        session,
      });
    // SESSIONS browsers each sign in to the first app; the first browser then signs in to
    // every other app in its session: SESSIONS sessions, CONNECTED_APPS granted clients.
    const browsers = Array.from({ length: SESSIONS }, () => new BrowserSession());
    const first = browsers[0] as BrowserSession;
    const [firstApp, ...otherApps] = clientIds as [string, ...string[]];
    const { accessToken } = await signInWith(firstApp, first);
    for (const browser of browsers.slice(1)) await signInWith(firstApp, browser);
    for (const clientId of otherApps) await signInWith(clientId, first);

    const [granted] = await context.admin<{ count: number }[]>`
      select count(distinct payload->>'clientId')::int as count from ${context.admin(schema)}.oidc_records
      where model = 'Grant'`;
    const client = new HttpClient(manager.baseUrl, accessToken, 1);
    try {
      const snapshot = await client.request("GET", "/api/v1/me");
      if (snapshot.status !== 200)
        throw new Error(`GET /api/v1/me answered ${snapshot.status}: ${snapshot.body}`);
      const { sessionCount } = JSON.parse(snapshot.body) as { sessionCount: number };
      context.log(
        `portal: ${sessionCount} sessions, ${granted?.count ?? 0} connected apps; measuring GET /api/v1/me`,
      );
      const me = await closedLoop(
        async () => {
          const answer = await client.request("GET", "/api/v1/me");
          if (answer.status !== 200) throw new Error(`GET /api/v1/me answered ${answer.status}`);
        },
        loadOptions(context.settings, 1, context.settings.portal.seconds),
      );
      return { sessionCount, grantedClients: granted?.count ?? 0, me };
    } finally {
      client.close();
    }
  } finally {
    await manager.stop();
  }
}
