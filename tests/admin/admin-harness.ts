/**
 * A real Admin console on a free port in front of a real TestManager (its provider included),
 * with its OAuth client registered the way an operator would (confidential, redirect,
 * post-logout and back-channel URIs, the operations, account-portal and admin-console resources), and a headless browser that signs in through it. With
 * `cuttableManager`, the console reaches the Manager's API through a TCP proxy the test can cut
 * (the Manager "stops" for the console and its browsers; its provider stays reachable).
 * `startInstance` adds another console process's app on the same schema and client.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener, type HttpBindings } from "@hono/node-server";
import { BrowserSession, parseForms } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { silentLogger } from "@tjm/platform";
import { type AdminApp, createAdminApp } from "../../admin/src/app.ts";
import { createSql, type Sql } from "../../admin/src/platform/db.ts";
import { loadMigrations, migrate } from "../../admin/src/platform/migrations.ts";
import { sessionCookieFor } from "../../admin/src/sessions/cookie.ts";
import { createSealer } from "../../admin/src/sessions/sealing.ts";
import { Sessions } from "../../admin/src/sessions/sessions.ts";
import { idHash } from "../../admin/src/sessions/store.ts";
import { RelyingParty, type SessionTokens } from "../../admin/src/sign-in/relying-party.ts";
import {
  createClient,
  generateClientSecret,
  hashClientSecret,
} from "../../manager/src/identity/clients/index.ts";
import { ACCOUNT_PORTAL_AUDIENCE, ADMIN_CONSOLE_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { createTestAccount, TEST_CLIENT_SECRET_HMAC_KEY, type TestAccount } from "../harness/identity.ts";
import { TestManager, type TestManagerOptions, testServices } from "../harness/manager.ts";
import { TcpProxy } from "../harness/tcp-proxy.ts";

const MAX_HOPS = 20;

const SESSION_KEY = "test-admin-session-key-0123456789abcdef";
const DEFAULT_IDLE_MINUTES = 30;
const DEFAULT_ABSOLUTE_HOURS = 12;

/** ADMIN_SESSION_IDLE_MINUTES and ADMIN_SESSION_ABSOLUTE_HOURS of one console; 30 and 12 by default. */
export interface SessionTimeouts {
  idleMinutes?: number;
  absoluteHours?: number;
}

export interface TestAdminOptions {
  /** More options for the Manager (e.g. `storage`); its provider's private hosts are set here. */
  manager?: TestManagerOptions;
  cuttableManager?: boolean;
  sessions?: SessionTimeouts;
}

/** A console session's row as stored, its tokens unsealed. */
export interface StoredSession {
  accountSub: string;
  sid: string | null;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  accessExpiresAt: Date;
  tokens: SessionTokens;
}

/** What one console process is made of: its own pool, relying party and sessions. */
interface ConsoleSetup {
  manager: TestManager;
  managerUrl: string;
  publicOrigin: string;
  clientId: string;
  clientSecret: string;
  timeouts: SessionTimeouts;
}

interface ConsoleParts {
  sql: Sql;
  sessions: Sessions;
  admin: AdminApp;
}

function buildConsole(setup: ConsoleSetup): ConsoleParts {
  const sql = createSql({ url: testServices().databaseUrl, schema: setup.manager.schema, poolMax: 4 });
  const relyingParty = new RelyingParty({
    issuer: setup.manager.issuerUrl,
    clientId: setup.clientId,
    clientSecret: setup.clientSecret,
    audience: OPERATIONS_AUDIENCE,
  });
  const sessions = new Sessions({
    sql,
    sealer: createSealer(SESSION_KEY),
    relyingParty,
    idleMinutes: setup.timeouts.idleMinutes ?? DEFAULT_IDLE_MINUTES,
    absoluteHours: setup.timeouts.absoluteHours ?? DEFAULT_ABSOLUTE_HOURS,
    logger: silentLogger,
  });
  const admin = createAdminApp({
    publicOrigin: setup.publicOrigin,
    managerUrl: setup.managerUrl,
    sessions,
    relyingParty,
    cookie: sessionCookieFor(setup.publicOrigin),
    logger: silentLogger,
    sql,
  });
  return { sql, sessions, admin };
}

/** An HTTP server on a free loopback port that answers 503 until `serve` plugs an app in. */
class ConsoleServer {
  private listener: ReturnType<typeof getRequestListener> = async (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  private readonly server = createServer((req, res) => this.listener(req, res));

  static async start(): Promise<ConsoleServer> {
    const started = new ConsoleServer();
    await new Promise<void>((resolve) => started.server.listen(0, "127.0.0.1", resolve));
    return started;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** `env` carries Node's request and response, as @hono/node-server's `serve` passes them. */
  serve(fetchResponse: (request: Request, env: HttpBindings) => Response | Promise<Response>): void {
    // node:http's createServer: HTTP/1 bindings only.
    this.listener = getRequestListener((request, env) => fetchResponse(request, env as HttpBindings));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A same-origin JSON request as the console's page makes it, to the process at `baseUrl`. */
function pageRequest(
  baseUrl: string,
  publicOrigin: string,
  browser: BrowserSession,
  path: string,
  init: { method?: string; body?: unknown },
): Promise<Response> {
  const method = init.method ?? "GET";
  const unsafe = method !== "GET" && method !== "HEAD";
  return browser.fetch(`${baseUrl}${path}`, {
    method,
    headers: unsafe ? { origin: publicOrigin, "content-type": "application/json" } : {},
    ...(unsafe ? { body: JSON.stringify(init.body ?? {}) } : {}),
  });
}

/**
 * Another console process (own pool, relying party and sessions) on the first one's schema and
 * client, configured with the same public origin, as two processes behind one load balancer.
 * Browsers' cookies reach it: they are keyed by host, not port.
 */
export class AdminInstance {
  constructor(
    readonly baseUrl: string,
    readonly sessions: Sessions,
    private readonly publicOrigin: string,
    private readonly parts: ConsoleParts,
    private readonly server: ConsoleServer,
  ) {}

  request(browser: BrowserSession, path: string, init: { method?: string; body?: unknown } = {}) {
    return pageRequest(this.baseUrl, this.publicOrigin, browser, path, init);
  }

  async close(): Promise<void> {
    this.parts.admin.stop();
    await this.server.close();
    await this.parts.sql.end({ timeout: 2 });
  }
}

export class TestAdmin {
  private readonly instances: AdminInstance[] = [];

  private constructor(
    readonly manager: TestManager,
    readonly baseUrl: string,
    readonly clientId: string,
    /** The console client's secret, for a test that talks to the provider as the console. */
    readonly clientSecret: string,
    readonly sql: Sql,
    readonly sessions: Sessions,
    readonly cookieName: string,
    /** Every logout_token the provider POSTed to the console's back-channel endpoint. */
    readonly logoutTokens: string[],
    private readonly setup: ConsoleSetup,
    private readonly admin: AdminApp,
    private readonly server: ConsoleServer,
    private readonly managerProxy: TcpProxy | undefined,
  ) {}

  static async start(options: TestAdminOptions = {}): Promise<TestAdmin> {
    // The provider calls the console's back-channel endpoint on loopback only when told to.
    const manager = await TestManager.start({
      ...options.manager,
      env: { ...options.manager?.env, PROVIDER_PRIVATE_NETWORK_HOSTS: "127.0.0.1" },
    });
    const managerPort = Number(new URL(manager.baseUrl).port);
    const managerProxy = options.cuttableManager
      ? await TcpProxy.start({ host: "127.0.0.1", port: managerPort })
      : undefined;
    const server = await ConsoleServer.start();
    const baseUrl = server.baseUrl;
    const clientId = crypto.randomUUID();
    const clientSecret = generateClientSecret();
    await createClient(manager.sql, {
      clientId,
      name: "Admin console",
      clientSecretHmac: hashClientSecret(clientSecret, TEST_CLIENT_SECRET_HMAC_KEY),
      tokenEndpointAuthMethod: "client_secret_basic",
      redirectUris: [`${baseUrl}/auth/callback`],
      postLogoutRedirectUris: [`${baseUrl}/auth/signed-out`],
      backchannelLogoutUri: `${baseUrl}/auth/backchannel-logout`,
      grantTypes: ["authorization_code", "refresh_token"],
      responseTypes: ["code"],
      firstParty: true,
      resources: [OPERATIONS_AUDIENCE, ACCOUNT_PORTAL_AUDIENCE, ADMIN_CONSOLE_AUDIENCE],
      projectIds: [],
    });
    const setup: ConsoleSetup = {
      manager,
      managerUrl: managerProxy ? `http://127.0.0.1:${managerProxy.port}` : manager.baseUrl,
      publicOrigin: baseUrl,
      clientId,
      clientSecret,
      timeouts: options.sessions ?? {},
    };
    const parts = buildConsole(setup);
    await migrate(parts.sql, manager.schema, await loadMigrations());
    const logoutTokens: string[] = [];
    server.serve(async (request, env) => {
      if (new URL(request.url).pathname === "/auth/backchannel-logout") {
        const token = new URLSearchParams(await request.clone().text()).get("logout_token");
        if (token !== null) logoutTokens.push(token);
      }
      return parts.admin.app.fetch(request, env);
    });
    return new TestAdmin(
      manager,
      baseUrl,
      clientId,
      clientSecret,
      parts.sql,
      parts.sessions,
      sessionCookieFor(baseUrl).name,
      logoutTokens,
      setup,
      parts.admin,
      server,
      managerProxy,
    );
  }

  /** Another console process serving the same users; closed with this one. */
  async startInstance(timeouts: SessionTimeouts = this.setup.timeouts): Promise<AdminInstance> {
    const parts = buildConsole({ ...this.setup, timeouts });
    const server = await ConsoleServer.start();
    server.serve((request, env) => parts.admin.app.fetch(request, env));
    const instance = new AdminInstance(server.baseUrl, parts.sessions, this.baseUrl, parts, server);
    this.instances.push(instance);
    return instance;
  }

  /** The console can no longer reach the Manager: new connections refused, open ones dropped. */
  async cutManager(): Promise<void> {
    if (!this.managerProxy) throw new Error("start the TestAdmin with cuttableManager");
    await this.managerProxy.cut();
  }

  async restoreManager(): Promise<void> {
    await this.managerProxy?.restore();
  }

  async close(): Promise<void> {
    await Promise.all(this.instances.map((instance) => instance.close()));
    await this.managerProxy?.close();
    this.admin.stop();
    await this.server.close();
    await this.sql.end({ timeout: 2 });
    await this.manager.close();
  }

  operator(): Promise<TestAccount> {
    return createTestAccount(this.manager.sql, { roles: ["operator"] });
  }

  /** An account with these roles (none: a plain account). */
  account(roles: ("operator" | "client-admin")[] = []): Promise<TestAccount> {
    return createTestAccount(this.manager.sql, { roles });
  }

  /** The session cookie's value in a browser, if it has one. */
  cookieOf(browser: BrowserSession): string | undefined {
    const header = browser.cookieHeader(this.baseUrl);
    return header
      .split("; ")
      .find((pair) => pair.startsWith(`${this.cookieName}=`))
      ?.slice(this.cookieName.length + 1);
  }

  /** The row of a browser's console session, its tokens unsealed; undefined when it is gone. */
  async storedSession(browser: BrowserSession): Promise<StoredSession | undefined> {
    const id = this.cookieOf(browser);
    if (id === undefined) return undefined;
    const hash = idHash(id);
    const [row] = await this.sql<(Omit<StoredSession, "tokens"> & { sealedTokens: Buffer })[]>`
      select account_sub, sid, sealed_tokens, created_at, last_seen_at, expires_at, access_expires_at
      from admin_sessions where id_hash = ${hash}`;
    if (row === undefined) return undefined;
    const { sealedTokens, ...stored } = row;
    return { ...stored, tokens: createSealer(SESSION_KEY).open<SessionTokens>(sealedTokens, hash) };
  }

  /** Seals `tokens` into a browser's session row in place of what it holds (any shape, as a test needs). */
  async replaceSealedTokens(browser: BrowserSession, tokens: unknown): Promise<void> {
    const hash = idHash(this.cookieOf(browser) as string);
    const sealed = createSealer(SESSION_KEY).seal(tokens, hash);
    await this.sql`update admin_sessions set sealed_tokens = ${sealed} where id_hash = ${hash}`;
  }

  /**
   * A browser's sign-in: GET /auth/sign-in, the provider's pages filled in, back to the
   * callback. Answers the callback's response (a redirect to returnTo, or the no-access page).
   */
  async signIn(
    account: TestAccount,
    browser = new BrowserSession(),
    onSignInPage: (browser: BrowserSession) => void = () => {},
  ): Promise<{ browser: BrowserSession; callback: Response }> {
    let response = await browser.fetch(`${this.baseUrl}/auth/sign-in?returnTo=/jobs`);
    let url = new URL(`${this.baseUrl}/auth/sign-in`);
    let signedIn = false;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      if (url.origin === this.baseUrl && url.pathname === "/auth/callback")
        return { browser, callback: response };
      const location = response.headers.get("location");
      if (location !== null) {
        await response.body?.cancel();
        url = new URL(location, url);
        response = await browser.fetch(url);
        continue;
      }
      const html = await response.text();
      const forms = parseForms(html, url);
      const login = forms.find((form) => "password" in form.fields);
      const consent = forms.find((form) => form.submits.some((button) => button.name === "decision"));
      const form = login !== undefined && !signedIn ? login : consent;
      if (form === undefined)
        throw new Error(`unexpected page ${url} (${response.status}): ${html.slice(0, 300)}`);
      const values: Record<string, string> =
        form === login ? { email: account.email, password: account.password } : { decision: "allow" };
      if (form === login) {
        signedIn = true;
        onSignInPage(browser);
      }
      url = new URL(form.action);
      response = await browser.fetch(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...form.fields, ...values }),
      });
    }
    throw new Error("too many hops signing in");
  }

  /** A same-origin JSON request as the console's page makes it. */
  request(browser: BrowserSession, path: string, init: { method?: string; body?: unknown } = {}) {
    return pageRequest(this.baseUrl, this.baseUrl, browser, path, init);
  }
}
