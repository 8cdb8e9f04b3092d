/**
 * The cost of POST /api/v1/me/logout/all for a browser that remembers 5 accounts, each signed
 * in to 3 clients that have a back-channel logout endpoint (a local HTTP receiver): the
 * request's latency (one transaction ends 5 sessions, revokes 15 grants and queues 15 logouts),
 * and the time until the receiver has every one of the 15 back-channel logouts, which the
 * Manager's sender signs and sends after the answer.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { BrowserSession, signIn } from "@tjm/devstack/oidc-client";
import { freePort } from "@tjm/devstack/services";
import { createAccount } from "../../manager/src/identity/accounts/index.ts";
import { createClient } from "../../manager/src/identity/clients/index.ts";
import { hashPassword } from "../../manager/src/identity/password-hashing.ts";
import { ACCOUNT_PORTAL_AUDIENCE, resourceIndicator } from "../../manager/src/identity/resources.ts";
import { createSql } from "../../manager/src/platform/db.ts";
import type { BenchContext } from "../scenario.ts";
import { freshManagerSchema, startManager, withProvider } from "../shared/manager-process.ts";

export const ACCOUNTS = 5;
export const CLIENTS = 3;
const ROUNDS = 10;
const REDIRECT_URI = "http://127.0.0.1:9/callback";
const RESOURCE = resourceIndicator(ACCOUNT_PORTAL_AUDIENCE);
const BROWSER_COOKIE = "tjm_browser";
const DELIVERY_TIMEOUT_MS = 30_000;

export interface LogoutAllResult {
  rounds: number;
  /** Per round: the request's wall time, and from its start to the last logout received. */
  requestMs: number[];
  allLogoutsMs: number[];
  sessionsEnded: number;
  logoutsQueued: number;
}

/** A back-channel logout endpoint that counts what it is sent; `until(n)` waits for the n-th. */
async function logoutReceiver(context: BenchContext) {
  let received = 0;
  let waiting: { count: number; resolve: () => void } | undefined;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      received++;
      if (waiting && received >= waiting.count) waiting.resolve();
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  context.cleanup.defer("stop the logout-all bench's receiver", async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });
  return {
    uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/logout`,
    received: () => received,
    until: (count: number) =>
      new Promise<void>((resolve, reject) => {
        if (received >= count) return resolve();
        const timer = setTimeout(
          () => reject(new Error(`${received} of ${count} logouts received`)),
          DELIVERY_TIMEOUT_MS,
        );
        waiting = {
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
      }),
  };
}

export async function benchLogoutAll(context: BenchContext): Promise<LogoutAllResult> {
  const { schema, env: withoutProvider } = await freshManagerSchema(context, "logout_all");
  const port = await freePort();
  const env = withProvider(withoutProvider, port);
  const sql = createSql({
    url: context.databaseUrl,
    schema,
    poolMax: 2,
    applicationName: "tjm-bench-logout-all",
  });
  context.cleanup.defer("close the logout-all bench connection", () => sql.end({ timeout: 5 }));
  const receiver = await logoutReceiver(context);
  const clientIds = Array.from({ length: CLIENTS }, () => crypto.randomUUID());
  for (const [index, clientId] of clientIds.entries()) {
    await createClient(sql, {
      clientId,
      name: `bench client ${index + 1}`,
      clientSecretHmac: null,
      tokenEndpointAuthMethod: "none",
      redirectUris: [REDIRECT_URI],
      backchannelLogoutUri: receiver.uri,
      grantTypes: ["authorization_code", "refresh_token"],
      responseTypes: ["code"],
      firstParty: true,
      resources: [ACCOUNT_PORTAL_AUDIENCE],
      projectIds: [],
    });
  }
  const manager = await startManager(
    "node",
    env,
    context.cleanup,
    { PROVIDER_PRIVATE_NETWORK_HOSTS: "127.0.0.1" },
    { port },
  );
  const password = "bench logout all password 42";
  const passwordHash = await hashPassword(password);

  const result: LogoutAllResult = {
    rounds: ROUNDS,
    requestMs: [],
    allLogoutsMs: [],
    sessionsEnded: 0,
    logoutsQueued: 0,
  };
  // One unmeasured round: the first pays for JIT and the provider's caches.
  for (let round = 0; round <= ROUNDS; round++) {
    let browserCookie: string | undefined;
    let portalToken: string | undefined;
    for (let index = 0; index < ACCOUNTS; index++) {
      const email = `round-${round}-account-${index}@bench.tjm.local`;
      await createAccount(sql, { email, displayName: `Account ${index}`, passwordHash, roles: [] });
      // Each account's own provider session, in the one browser its cookie names.
      const browser = new BrowserSession();
      if (browserCookie)
        browser.store(env.OIDC_ISSUER_URL, [`${BROWSER_COOKIE}=${browserCookie}; Path=/oidc`]);
      for (const clientId of clientIds) {
        const tokens = await signIn({
          issuer: env.OIDC_ISSUER_URL,
          clientId,
          redirectUri: REDIRECT_URI,
          resource: RESOURCE,
          scope: "openid",
          email,
          password,
          session: browser,
        });
        portalToken ??= tokens.accessToken;
      }
      browserCookie ??= browser.list().find((cookie) => cookie.name === BROWSER_COOKIE)?.value;
    }
    const before = receiver.received();
    const started = performance.now();
    const response = await fetch(`${manager.baseUrl}/api/v1/me/logout/all`, {
      method: "POST",
      headers: { authorization: `Bearer ${portalToken}` },
    });
    const requestMs = performance.now() - started;
    const body = (await response.json()) as { sessionsEnded: number; backchannelLogoutsQueued: number };
    if (response.status !== 200)
      throw new Error(`logout/all answered ${response.status}: ${JSON.stringify(body)}`);
    await receiver.until(before + body.backchannelLogoutsQueued);
    const allLogoutsMs = performance.now() - started;
    if (round === 0) continue;
    result.requestMs.push(requestMs);
    result.allLogoutsMs.push(allLogoutsMs);
    result.sessionsEnded = body.sessionsEnded;
    result.logoutsQueued = body.backchannelLogoutsQueued;
  }
  context.log(`logout-all: ${ROUNDS} rounds of ${ACCOUNTS} accounts x ${CLIENTS} clients`);
  await manager.stop();
  return result;
}
