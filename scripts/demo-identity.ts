/**
 * The demo's identities: the keys and secrets a demo schema needs again on its next run, the
 * demo operator's account, the operations client the demo signs in with and the Admin console's
 * confidential client, all made with the Manager's CLI as an operator would, and the operator's
 * headless session with the built-in provider.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { runScript } from "@tjm/devstack/manager-process";
import { refresh, signIn, type Tokens } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { findClientMetadata } from "../manager/src/identity/clients/index.ts";
import {
  ACCOUNT_PORTAL_AUDIENCE,
  ADMIN_CONSOLE_AUDIENCE,
  resourceIndicator,
} from "../manager/src/identity/resources.ts";
import { createSql } from "../manager/src/platform/db.ts";

const say = (line = "") => console.log(line);

export const OPERATOR_EMAIL = "operator@demo.tjm.local";
/**
 * Where the provider sends the operator's browser back with a code; the headless sign-in stops
 * there without fetching it. Not on the Manager's port: the client outlives runs on other ports.
 */
export const OPERATIONS_REDIRECT_URI = "http://127.0.0.1:8400/tjm-demo/callback";
export const OPERATIONS_RESOURCE = resourceIndicator(OPERATIONS_AUDIENCE);
/** offline_access brings a refresh token: access tokens last at most 10 minutes, the demo serves longer. */
export const OPERATOR_SCOPE = "openid offline_access";
/** An access token is refreshed when it has less than this left (or half its lifetime, if shorter). */
const TOKEN_REFRESH_MARGIN_S = 60;
/** The console's routes its client registers (admin/src/sign-in). */
const CONSOLE_CALLBACK_PATH = "/auth/callback";

/** The demo's database: its PostgreSQL and the schema its runs share. */
export interface DemoDatabase {
  url: string;
  schema: string;
}

/**
 * What a demo schema needs again on its next run: the key its provider's signing keys are
 * stored under (a new one would leave them undecryptable: KeyDecryptionError), the key client
 * secrets are stored under, the operator's password, the operations client's id, the key the
 * console seals its sessions' tokens under, and the console client's id and secret (the
 * provider keeps only an HMAC of the secret).
 */
export interface DemoState {
  PROVIDER_KEY_ENCRYPTION_KEY: string;
  CLIENT_SECRET_HMAC_KEY: string;
  DEMO_OPERATOR_PASSWORD: string;
  ADMIN_SESSION_KEY: string;
  DEMO_OPERATIONS_CLIENT_ID?: string;
  DEMO_CONSOLE_CLIENT_ID?: string;
  DEMO_CONSOLE_CLIENT_SECRET?: string;
}

/** The console's confidential client. */
export interface ConsoleClient {
  clientId: string;
  clientSecret: string;
}

/**
 * Kept in `~/.cache/tjm-demo/<schema>.env` (or under XDG_CACHE_HOME), mode 0600: a cache
 * directory rather than the temp directory, since the schema outlives reboots and a cleaned
 * temp directory would strand its keys. Keys in a file suit a demo on loopback only; a real
 * Manager gets them from its secret store.
 */
export function statePath(schema: string): string {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(cache, "tjm-demo", `${schema}.env`);
}

/** Where the operator's current access token is kept while the demo serves (`$(cat …)` in a shell). */
export function tokenPath(schema: string): string {
  return statePath(schema).replace(/\.env$/, ".token");
}

/** Replaces the token file's content in one rename, so a reader never sees half a token. */
async function writeTokenFile(path: string, token: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, `${token}\n`, { mode: 0o600 });
  await rename(partial, path);
}

async function readState(path: string): Promise<Partial<DemoState>> {
  const text = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return "";
    throw err;
  });
  const entries = text
    .split("\n")
    .filter((line) => /^[A-Z_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]);
  return Object.fromEntries(entries);
}

async function writeState(schema: string, state: DemoState): Promise<void> {
  const path = statePath(schema);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const lines = Object.entries(state)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`);
  const header = `# npm run demo, schema ${schema}: local demo keys and the demo operator's sign-in. Do not reuse.`;
  await writeFile(path, `${[header, ...lines].join("\n")}\n`, { mode: 0o600 });
  // The mode above applies only to a file that did not exist.
  await chmod(path, 0o600);
}

const randomKey = () => randomBytes(32).toString("hex");

/** The stored state of `database.schema`, with whatever is missing made and written back. */
export async function loadDemoState(database: DemoDatabase): Promise<DemoState> {
  const { schema } = database;
  const path = statePath(schema);
  const stored = await readState(path);
  if (stored.PROVIDER_KEY_ENCRYPTION_KEY === undefined && (await storedSigningKeys(database)) > 0) {
    throw new Error(
      `schema ${schema} holds provider signing keys encrypted under a key that was kept in ${path}, which is gone: drop the schema (drop schema ${schema} cascade) or name another with DEMO_SCHEMA`,
    );
  }
  const state: DemoState = {
    ...stored,
    PROVIDER_KEY_ENCRYPTION_KEY: stored.PROVIDER_KEY_ENCRYPTION_KEY ?? randomKey(),
    CLIENT_SECRET_HMAC_KEY: stored.CLIENT_SECRET_HMAC_KEY ?? randomKey(),
    DEMO_OPERATOR_PASSWORD: stored.DEMO_OPERATOR_PASSWORD ?? randomBytes(15).toString("base64url"),
    ADMIN_SESSION_KEY: stored.ADMIN_SESSION_KEY ?? randomKey(),
  };
  await writeState(schema, state);
  const kept = stored.PROVIDER_KEY_ENCRYPTION_KEY === undefined ? "new" : "kept from an earlier run";
  say(`• provider keys, the console's keys and the operator's password: ${path} (${kept})`);
  return state;
}

/** Runs `body` with a small pool on the demo schema, closed afterwards. */
async function withDatabase<T>(
  database: DemoDatabase,
  body: (sql: ReturnType<typeof createSql>) => Promise<T>,
): Promise<T> {
  const sql = createSql({
    url: database.url,
    schema: database.schema,
    poolMax: 1,
    applicationName: "tjm-demo",
  });
  try {
    return await body(sql);
  } finally {
    await sql.end();
  }
}

function storedSigningKeys(database: DemoDatabase): Promise<number> {
  return withDatabase(database, async (sql) => {
    const [row] = await sql<{ count: number }[]>`select count(*)::int as count from provider_signing_keys`;
    return row?.count ?? 0;
  });
}

/** The redirect URIs of an enabled client; undefined for an unknown or disabled one. */
function clientRedirectUris(
  database: DemoDatabase,
  clientId: string,
): Promise<readonly string[] | undefined> {
  return withDatabase(database, async (sql) => (await findClientMetadata(sql, clientId))?.redirect_uris);
}

/** `npm run manager -- <args>`; its one line of JSON, or undefined when it exits 1 with `accepted`. */
async function managerCommand(
  env: Record<string, string>,
  args: string[],
  stdin?: string,
  accepted?: RegExp,
): Promise<Record<string, unknown> | undefined> {
  const result = await runScript(["manager", "--", ...args], env, stdin);
  if (result.code === 1 && accepted?.test(result.stderr)) return undefined;
  if (result.code !== 0) {
    throw new Error(
      `npm run manager -- ${args.join(" ")} exited with ${result.code}: ${result.stderr.trim()}`,
    );
  }
  return JSON.parse(result.stdout.trim()) as Record<string, unknown>;
}

/**
 * The demo operator's account and the operations client it signs in with, made by the
 * Manager's CLI as an operator would; a later run on the same schema reuses both. Resolves
 * with the client's id.
 */
export async function makeOperator(
  database: DemoDatabase,
  env: Record<string, string>,
  state: DemoState,
): Promise<string> {
  const created = await managerCommand(
    env,
    ["accounts", "create", "--email", OPERATOR_EMAIL, "--name", "Demo operator", "--role", "operator"],
    `${state.DEMO_OPERATOR_PASSWORD}\n`,
    /already exists/,
  );
  say(
    created
      ? `• operator account ${OPERATOR_EMAIL} created (role operator)`
      : `• operator account ${OPERATOR_EMAIL}: made by an earlier run, its password kept`,
  );
  const storedClient = state.DEMO_OPERATIONS_CLIENT_ID;
  if (storedClient !== undefined && (await clientRedirectUris(database, storedClient)) !== undefined) {
    say(`• operations client ${storedClient}: made by an earlier run`);
    return storedClient;
  }
  const client = await managerCommand(env, [
    ...["clients", "create", "--name", "TJM demo operations", "--first-party", "--public"],
    ...["--redirect-uri", OPERATIONS_REDIRECT_URI, "--resource", OPERATIONS_AUDIENCE],
    ...["--grant", "authorization_code", "--grant", "refresh_token"],
  ]);
  const clientId = String(client?.clientId);
  state.DEMO_OPERATIONS_CLIENT_ID = clientId;
  await writeState(database.schema, state);
  say(`• operations client ${clientId} created (first-party, public, PKCE; resource ${OPERATIONS_AUDIENCE})`);
  return clientId;
}

/**
 * The origin the console client of an earlier run was registered for, if it still exists: the
 * console is best started there again, so the client (and a browser's session) carry over.
 */
export async function registeredConsoleOrigin(
  database: DemoDatabase,
  state: DemoState,
): Promise<string | undefined> {
  if (state.DEMO_CONSOLE_CLIENT_ID === undefined) return undefined;
  const [callback] = (await clientRedirectUris(database, state.DEMO_CONSOLE_CLIENT_ID)) ?? [];
  return callback === undefined ? undefined : new URL(callback).origin;
}

/**
 * The resources the console signs in for: account-portal for every account, operations for
 * operators, admin-console for client admins (the provider issues each by the account's roles).
 */
const CONSOLE_RESOURCES = [OPERATIONS_AUDIENCE, ACCOUNT_PORTAL_AUDIENCE, ADMIN_CONSOLE_AUDIENCE];

/** Whether the console client of an earlier run may get tokens for every resource the console asks. */
async function consoleClientHasResources(database: DemoDatabase, clientId: string): Promise<boolean> {
  const metadata = await withDatabase(database, (sql) => findClientMetadata(sql, clientId));
  const granted = (metadata?.resource_scopes ?? {}) as Record<string, unknown>;
  return CONSOLE_RESOURCES.every((audience) => audience in granted);
}

/**
 * The Admin console's confidential client for `consoleUrl`, made with the CLI; the client of an
 * earlier run is reused when it still exists, was registered for the same origin (its port
 * may have been taken this time) and for every resource the console asks for.
 */
export async function makeConsoleClient(
  database: DemoDatabase,
  env: Record<string, string>,
  state: DemoState,
  consoleUrl: string,
): Promise<ConsoleClient> {
  const { DEMO_CONSOLE_CLIENT_ID: storedId, DEMO_CONSOLE_CLIENT_SECRET: storedSecret } = state;
  if (
    storedId !== undefined &&
    storedSecret !== undefined &&
    (await registeredConsoleOrigin(database, state)) === consoleUrl &&
    (await consoleClientHasResources(database, storedId))
  ) {
    say(`• console client ${storedId}: made by an earlier run, its secret kept`);
    return { clientId: storedId, clientSecret: storedSecret };
  }
  const created = await managerCommand(env, [
    ...["clients", "create", "--name", "Admin console", "--first-party"],
    ...["--redirect-uri", `${consoleUrl}${CONSOLE_CALLBACK_PATH}`],
    ...["--post-logout-redirect-uri", `${consoleUrl}/auth/signed-out`],
    ...["--backchannel-logout-uri", `${consoleUrl}/auth/backchannel-logout`],
    ...["--grant", "authorization_code", "--grant", "refresh_token"],
    ...CONSOLE_RESOURCES.flatMap((audience) => ["--resource", audience]),
  ]);
  const client = { clientId: String(created?.clientId), clientSecret: String(created?.clientSecret) };
  state.DEMO_CONSOLE_CLIENT_ID = client.clientId;
  state.DEMO_CONSOLE_CLIENT_SECRET = client.clientSecret;
  await writeState(database.schema, state);
  say(
    `• console client ${client.clientId} created (first-party, confidential, for ${consoleUrl}; resources ${CONSOLE_RESOURCES.join(", ")})`,
  );
  return client;
}

/**
 * The operator's tokens from the built-in provider: one sign-in through the authorization-code
 * flow (the HTTP a browser would make), then the access token refreshed with the refresh token
 * shortly before it expires, for as long as the demo serves. The current access token is also in
 * `tokenFile`, rewritten at every refresh (tokens live 10 minutes), for the printed curl hint.
 */
export class OperatorSession {
  private refreshing: Promise<void> | undefined;
  private renewal: ReturnType<typeof setInterval> | undefined;

  private constructor(
    private readonly issuer: string,
    private readonly clientId: string,
    private tokens: Tokens,
    private refreshAt: number,
    readonly tokenFile: string,
  ) {}

  static async signIn(
    issuer: string,
    clientId: string,
    password: string,
    tokenFile: string,
  ): Promise<OperatorSession> {
    const signedIn = await signIn({
      issuer,
      clientId,
      redirectUri: OPERATIONS_REDIRECT_URI,
      resource: OPERATIONS_RESOURCE,
      scope: OPERATOR_SCOPE,
      email: OPERATOR_EMAIL,
      password,
    });
    say(
      `• operator ${OPERATOR_EMAIL} signed in through the provider (${signedIn.roundTrips} HTTP requests, no browser)`,
    );
    await writeTokenFile(tokenFile, signedIn.accessToken);
    return new OperatorSession(issuer, clientId, signedIn, OperatorSession.refreshTime(signedIn), tokenFile);
  }

  /** Refreshes whenever due, so the token file stays current while nothing else asks for a token. */
  keepRenewing(checkEveryMs: number, onError: (error: Error) => void): void {
    this.renewal ??= setInterval(() => {
      this.accessToken().catch(onError);
    }, checkEveryMs);
  }

  /** Stops renewing and removes the token file: the token in it dies with the demo's Manager. */
  async end(): Promise<void> {
    clearInterval(this.renewal);
    await rm(this.tokenFile, { force: true });
  }

  private static refreshTime(tokens: Tokens): number {
    const lifetime = tokens.expiresIn ?? 0;
    return Date.now() + Math.max(lifetime - TOKEN_REFRESH_MARGIN_S, lifetime / 2) * 1000;
  }

  async accessToken(): Promise<string> {
    if (Date.now() >= this.refreshAt) {
      this.refreshing ??= this.refresh().finally(() => {
        this.refreshing = undefined;
      });
      await this.refreshing;
    }
    return this.tokens.accessToken;
  }

  private async refresh(): Promise<void> {
    if (this.tokens.refreshToken === undefined) throw new Error("the provider issued no refresh token");
    const tokens = await refresh({
      issuer: this.issuer,
      clientId: this.clientId,
      refreshToken: this.tokens.refreshToken,
      resource: OPERATIONS_RESOURCE,
    });
    this.tokens = tokens;
    this.refreshAt = OperatorSession.refreshTime(tokens);
    await writeTokenFile(this.tokenFile, tokens.accessToken);
  }
}
