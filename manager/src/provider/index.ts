/**
 * TJM's built-in OpenID provider: oidc-provider configured for TJM, with its signing keys
 * re-read from PostgreSQL on a tick. A changed key set builds a fresh Provider instance (its
 * keys are fixed at construction); every record lives in PostgreSQL, so swapping instances
 * loses nothing, and requests already running finish on the instance they started on.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "@tjm/platform";
import { pageHeaders, scriptHashes } from "@tjm/platform/page-headers";
import type { Config } from "../config.ts";
import { createSignInLimiter, createSignIns } from "../identity/accounts/index.ts";
import { writeAuditEvent } from "../identity/audit.ts";
import { findClientMetadata, verifyClientSecret } from "../identity/clients/index.ts";
import type { FactorDeps } from "../identity/factors/index.ts";
import { factorSettingsFromConfig } from "../identity/factors/settings.ts";
import { oneTimeCodeKey } from "../identity/one-time-codes.ts";
import type { Recovery } from "../identity/recovery/index.ts";
import { type TjmResource, tjmResources } from "../identity/resources.ts";
import {
  BROWSER_COOKIE,
  BROWSER_COOKIE_MAX_AGE_MS,
  browserCookieHmac,
  type LogoutClient,
  type LogoutClients,
  newBrowserCookie,
  rememberSignIn,
  touchSession,
} from "../identity/sessions/index.ts";
import type { Sql } from "../platform/db.ts";
import { TickingTask } from "../platform/loop.ts";
import { purgeExpiredRecords } from "./adapter.ts";
import { compareClientSecretsByHmac } from "./clients.ts";
import { Provider, providerConfiguration } from "./configuration.ts";
import { endSessionAsConfirmed, logoutRequestOf } from "./end-session.ts";
import { type Catalogue, catalogueFor, loadCatalogues } from "./interactions/messages.ts";
import { errorPage, loggedOutPage, logoutConfirmPage, PAGE_SOURCES } from "./interactions/pages.ts";
import { interactionsApp } from "./interactions/routes.ts";
import { deriveKey, ensureSigningKey, type LoadedKeys, loadSigningKeys } from "./keys.ts";
import { endsWithoutConfirmation } from "./logout.ts";
import type { ProviderMount } from "./node-listener.ts";
import { keyRetentionMs } from "./retention.ts";

const PURGE_EVERY_MS = 10 * 60_000;

/**
 * Discovery and the key set may be cached, but never past the moment a replica could sign with
 * a key a cached copy lacks: a new key is published PROVIDER_KEY_PUBLISH_LEAD_SECONDS before it
 * signs, and replicas notice it within PROVIDER_KEY_REFRESH_SECONDS. Five minutes at most.
 */
export function publicDocumentCacheControl(config: Config): string {
  const seconds = Math.min(
    300,
    config.PROVIDER_KEY_PUBLISH_LEAD_SECONDS - config.PROVIDER_KEY_REFRESH_SECONDS,
  );
  return `public, max-age=${Math.max(0, seconds)}`;
}

/** The provider's own pages (error, logout confirmation, logged out): never cached, never framed. */
const PROVIDER_PAGE_HEADERS = { "cache-control": "no-store", ...pageHeaders(PAGE_SOURCES) };

type ProviderMiddleware = Parameters<Provider["use"]>[0];

/**
 * Every answer of the provider starts with a page's headers that allow nothing, so a page it
 * renders itself is covered too. The one such page, form_post's auto-submitting form, adds its
 * inline script's hash to script-src (oidc-provider's response_modes/form_post.js): it is then
 * served with exactly that script allowed.
 */
const providerPagesHeaders: ProviderMiddleware = async (ctx, next) => {
  ctx.set(pageHeaders({}));
  await next();
  const inlineScripts = scriptHashes(ctx.response.get("content-security-policy"));
  if (inlineScripts.length > 0) ctx.set(pageHeaders({ script: inlineScripts }));
};

export interface IdentityProviderOptions {
  config: Config;
  sql: Sql;
  logger: Logger;
}

export class IdentityProvider {
  private provider: Provider;
  private keysFingerprint: string;
  private readonly refresher: TickingTask;
  private readonly purger: TickingTask;

  private constructor(
    private readonly options: IdentityProviderOptions,
    readonly resources: TjmResource[],
    readonly catalogues: Map<string, Catalogue>,
    keys: LoadedKeys,
  ) {
    this.provider = this.build(keys);
    this.keysFingerprint = keys.fingerprint;
    const owner = this;
    const logger = options.logger;
    this.refresher = new (class extends TickingTask {
      protected tick() {
        return owner.refreshKeys();
      }
    })(
      { tickMs: options.config.PROVIDER_KEY_REFRESH_SECONDS * 1000, logger },
      "re-reading the signing keys failed",
    );
    this.purger = new (class extends TickingTask {
      protected async tick() {
        const purged = await purgeExpiredRecords(options.sql);
        if (purged > 0) logger.debug("expired provider records purged", { purged });
      }
    })({ tickMs: PURGE_EVERY_MS, logger }, "purging expired provider records failed");
  }

  static async start(options: IdentityProviderOptions): Promise<IdentityProvider> {
    const { config, sql } = options;
    const encryptionKey = deriveKey(config.PROVIDER_KEY_ENCRYPTION_KEY as string, "signing keys");
    await ensureSigningKey(sql, encryptionKey);
    const keys = await loadSigningKeys(sql, encryptionKey, keyRetentionMs(config));
    const resources = tjmResources({
      operations: config.OIDC_OPERATIONS_ADMIN_AUDIENCE,
      tenant: config.OIDC_TENANT_AUDIENCE,
    });
    const identity = new IdentityProvider(options, resources, await loadCatalogues(), keys);
    identity.refresher.start();
    identity.purger.start();
    return identity;
  }

  get issuer(): string {
    return this.options.config.OIDC_ISSUER_URL;
  }

  /** The path the provider is served under (the issuer URL's). */
  get mountPath(): string {
    return new URL(this.issuer).pathname.replace(/\/+$/, "");
  }

  /** The instance that serves now (interaction routes ask it for their details). */
  current(): Provider {
    return this.provider;
  }

  /** Serves a request whose URL has already been made relative to the mount path. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.provider.callback()(req, res);
  }

  async stop(): Promise<void> {
    await Promise.all([this.refresher.stop(), this.purger.stop()]);
  }

  /** Re-reads the keys; a new published set or signing key swaps in a new instance. */
  async refreshKeys(): Promise<void> {
    const { config, sql, logger } = this.options;
    const keys = await loadSigningKeys(
      sql,
      deriveKey(config.PROVIDER_KEY_ENCRYPTION_KEY as string, "signing keys"),
      keyRetentionMs(config),
    );
    if (keys.fingerprint === this.keysFingerprint) return;
    this.provider = this.build(keys);
    this.keysFingerprint = keys.fingerprint;
    logger.info("provider signing keys changed", {
      signingKid: keys.signingKid,
      published: keys.fingerprint,
    });
  }

  private build(keys: LoadedKeys): Provider {
    const { config, sql, logger } = this.options;
    const catalogueOf = (acceptLanguage: string | undefined) => catalogueFor(this.catalogues, acceptLanguage);
    const provider = new Provider(
      config.OIDC_ISSUER_URL,
      providerConfiguration({
        issuer: config.OIDC_ISSUER_URL,
        sql,
        logger,
        resources: this.resources,
        jwks: keys.jwks,
        cookieKeys: [
          deriveKey(config.PROVIDER_KEY_ENCRYPTION_KEY as string, "cookies").toString("base64url"),
        ],
        accessTokenTtlSeconds: config.PROVIDER_ACCESS_TOKEN_TTL_SECONDS,
        refreshTokenLifetimeSeconds: config.PROVIDER_REFRESH_TOKEN_LIFETIME_SECONDS,
        sessionTtlSeconds: config.PROVIDER_SESSION_TTL_SECONDS,
        privateNetworkHosts: config.PROVIDER_PRIVATE_NETWORK_HOSTS,
        renderError: (ctx, out) => {
          ctx.set(PROVIDER_PAGE_HEADERS);
          ctx.type = "html";
          ctx.body = errorPage({
            catalogue: catalogueOf(ctx.get("accept-language")),
            error: String(out.error),
            description: out.error_description === undefined ? undefined : String(out.error_description),
          });
        },
        logoutSource: async (ctx, form) => {
          if (endsWithoutConfirmation(logoutRequestOf(ctx))) return endSessionAsConfirmed(ctx);
          ctx.set(PROVIDER_PAGE_HEADERS);
          ctx.type = "html";
          ctx.body = logoutConfirmPage({
            catalogue: catalogueOf(ctx.get("accept-language")),
            issuer: config.OIDC_ISSUER_URL,
            formHtml: form,
            formId: "op.logoutForm",
          });
        },
        postLogoutSuccessSource: (ctx) => {
          ctx.set(PROVIDER_PAGE_HEADERS);
          ctx.type = "html";
          ctx.body = loggedOutPage({
            catalogue: catalogueOf(ctx.get("accept-language")),
            clientName: ctx.oidc.client?.clientName,
          });
        },
      }),
    );
    provider.use(providerPagesHeaders);
    // The listener sets or filters every forwarding header: X-Forwarded-Proto is the issuer's,
    // X-Forwarded-For is kept only from a trusted proxy (node-listener.ts).
    provider.proxy = true;
    const cacheControl = publicDocumentCacheControl(config);
    provider.use(async (ctx, next) => {
      await next();
      const route = (ctx as { oidc?: { route?: string } }).oidc?.route;
      if (ctx.status === 200 && (route === "discovery" || route === "jwks"))
        ctx.set("cache-control", cacheControl);
    });
    compareClientSecretsByHmac(provider, (presented, stored) =>
      verifyClientSecret(presented, stored, config.CLIENT_SECRET_HMAC_KEY as string),
    );
    this.auditProviderEvents(provider);
    provider.on("server_error", (_ctx: unknown, err: unknown) => logger.error("provider error", { err }));
    return provider;
  }

  private auditProviderEvents(provider: Provider): void {
    const { sql, logger } = this.options;
    const audit = (event: Parameters<typeof writeAuditEvent>[1]) =>
      writeAuditEvent(sql, event).catch((err) => logger.error("writing an audit event failed", { err }));
    provider.on("grant.error", (ctx, err) => {
      if ((err as { error_detail?: string }).error_detail !== "refresh token already used") return;
      void audit({
        event: "auth.refresh-token-reuse",
        result: "failure",
        actorAccountId: ctx.oidc.entities.Account?.accountId,
        clientId: ctx.oidc.client?.clientId,
        address: ctx.ip,
        details: { grantRevoked: true },
      });
    });
    const browserKey = deriveKey(
      this.options.config.PROVIDER_KEY_ENCRYPTION_KEY as string,
      "browser cookies",
    );
    provider.on("authorization.success", (ctx) => {
      const session = ctx.oidc.session;
      if (!session?.accountId) return;
      let cookie = ctx.cookies.get(BROWSER_COOKIE);
      if (!cookie) {
        cookie = newBrowserCookie();
        ctx.cookies.set(BROWSER_COOKIE, cookie, {
          httpOnly: true,
          sameSite: "lax",
          path: new URL(this.issuer).pathname,
          maxAge: BROWSER_COOKIE_MAX_AGE_MS,
          signed: false,
        });
      }
      rememberSignIn(sql, {
        cookieHmac: browserCookieHmac(cookie, browserKey),
        sessionUid: session.uid,
        accountId: session.accountId,
        clientAddress: ctx.ip,
        userAgent: ctx.get("user-agent"),
      }).catch((err) => logger.error("recording the browser's sign-in failed", { err }));
    });
    provider.on("grant.success", (ctx) => {
      const sessionUid = ctx.oidc.entities.RefreshToken?.sessionUid;
      if (ctx.oidc.params?.grant_type !== "refresh_token" || !sessionUid) return;
      touchSession(sql, sessionUid).catch((err) => logger.error("recording a session's use failed", { err }));
    });
    provider.on("backchannel.error", (_ctx, err, client, accountId) => {
      logger.warn("back-channel logout not delivered", {
        clientId: client.clientId,
        accountId,
        reason: (err as Error).message,
        hint: "a client on a private address needs its host in PROVIDER_PRIVATE_NETWORK_HOSTS",
      });
    });
    provider.on("end_session.success", (ctx) => {
      void audit({
        event: "auth.logout",
        result: "success",
        actorAccountId: ctx.oidc.session?.accountId,
        clientId: ctx.oidc.client?.clientId,
        address: ctx.ip,
      });
    });
  }
}

/**
 * The provider's clients for the back-channel logouts TJM sends itself: found through the
 * instance that serves now, whose `backchannelLogout` signs the logout token with its keys and
 * sends it through its `fetch` (so PROVIDER_PRIVATE_NETWORK_HOSTS applies).
 */
function logoutClientsOf(identity: IdentityProvider, sql: Sql): LogoutClients {
  return {
    // oidc-provider's Client has backchannelLogout(sub, sid), absent from its published types.
    // A client deleted since its logouts were queued is built from its tombstone's metadata:
    // never served by the provider, only signed for here.
    find: async (clientId) => {
      const provider = identity.current();
      const served = await provider.Client.find(clientId);
      if (served) return served as unknown as LogoutClient;
      const deleted = await findClientMetadata(sql, clientId, true);
      if (!deleted) return undefined;
      const Client = provider.Client as unknown as new (metadata: unknown) => LogoutClient;
      return new Client(deleted);
    },
  };
}

/** The provider as the Node listener mounts it: the provider, its interaction pages, and how to stop. */
export async function startProviderMount(options: IdentityProviderOptions): Promise<
  ProviderMount & {
    logoutClients: LogoutClients;
    /** The Manager's recovery domain, for the recovery pages: the Manager starts after the provider. */
    attachRecovery(recovery: Recovery): void;
    /** The Manager's message delivery, for the codes of the second step's SMS and e-mail factors. */
    attachDelivery(delivery: FactorDeps["delivery"]): void;
    stop(): Promise<void>;
  }
> {
  const { config, sql, logger } = options;
  const identity = await IdentityProvider.start(options);
  const limiter = createSignInLimiter(sql, {
    accountLimit: config.SIGN_IN_ACCOUNT_FAILURE_LIMIT,
    addressLimit: config.SIGN_IN_ADDRESS_FAILURE_LIMIT,
    windowSeconds: config.SIGN_IN_FAILURE_WINDOW_SECONDS,
  });
  let recovery: Recovery | undefined;
  let delivery: FactorDeps["delivery"] | undefined;
  const mfa = factorSettingsFromConfig(config);
  const secondFactors = {
    sql,
    limiter,
    failureWindowSeconds: config.SIGN_IN_FAILURE_WINDOW_SECONDS,
    oneTimeCodeKey: oneTimeCodeKey(config.ONE_TIME_CODE_HMAC_KEY ?? config.ENROLLMENT_TOKEN_SECRET),
    secretKey: mfa.secretKey,
    codeSendsPerHour: mfa.codeSendsPerHour,
  };
  const interactions = interactionsApp({
    identity,
    logger,
    signIns: createSignIns({ sql, limiter, logger }),
    trustedProxies: config.TRUSTED_PROXY_ADDRESSES,
    recovery: () => recovery,
    sql,
    secondFactors: () => (delivery ? { ...secondFactors, delivery } : undefined),
    operatorSmsEmailAllowed: mfa.operatorSmsEmailAllowed,
  });
  return {
    identity,
    interactions,
    trustedProxies: config.TRUSTED_PROXY_ADDRESSES,
    logoutClients: logoutClientsOf(identity, sql),
    attachRecovery: (started) => {
      recovery = started;
    },
    attachDelivery: (started) => {
      delivery = started;
    },
    stop: () => identity.stop(),
  };
}
