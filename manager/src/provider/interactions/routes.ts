/**
 * The provider's interactions: the pages a browser meets between the client's authorization
 * request and its redirect back (sign-in, consent). oidc-provider keeps the interaction's state
 * and decides which prompt is due; these routes render it and hand the result back.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HttpBindings } from "@hono/node-server";
import type { Logger } from "@tjm/platform";
import { pageHeaders } from "@tjm/platform/page-headers";
import type { Context } from "hono";
import { Hono } from "hono";
import { emailKeyProblem } from "../../identity/identifiers.ts";
import {
  hashPassword,
  needsRehash,
  verifyPassword,
  verifyUnknownAccountPassword,
} from "../../identity/password-hashing.ts";
import { clientAddress } from "../../platform/client-address.ts";
import type { Sql } from "../../platform/db.ts";
import { closeWhenBodyUnread, limitBody, SMALL_BODY_MAX_BYTES } from "../../platform/http.ts";
import { findProviderAccount, findSignInCandidate } from "../accounts.ts";
import { writeAuditEvent } from "../audit.ts";
import { RESOURCE_ACCESS_SCOPE } from "../configuration.ts";
import type { IdentityProvider } from "../index.ts";
import { MAX_PASSWORD_LENGTH } from "../input-bounds.ts";
import { accountMayHold, requiredRole, type TjmResource } from "../resources.ts";
import type { SignInLimiter } from "../sign-in-limits.ts";
import { catalogueFor } from "./messages.ts";
import { consentPage, errorPage, loginPage, PAGE_SOURCES } from "./pages.ts";

export interface InteractionDeps {
  identity: IdentityProvider;
  sql: Sql;
  logger: Logger;
  limiter: SignInLimiter;
  trustedProxies: readonly string[];
}

type Env = { Bindings: HttpBindings };

/** Pages that hold a sign-in form: never cached, and the page headers of their sources. */
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  ...pageHeaders(PAGE_SOURCES),
};

function page(c: Context<Env>, html: string, status: 200 | 400 | 429 = 200, retryAfterSeconds?: number) {
  const headers =
    retryAfterSeconds === undefined
      ? PAGE_HEADERS
      : { ...PAGE_HEADERS, "retry-after": String(retryAfterSeconds) };
  return c.body(html, status, headers);
}

function nodePair(c: Context<Env>): [IncomingMessage, ServerResponse] {
  return [c.env.incoming, c.env.outgoing as ServerResponse];
}

function indicators(params: Record<string, unknown>): string[] {
  const resource = params.resource;
  if (typeof resource === "string") return [resource];
  return Array.isArray(resource) ? resource.filter((item): item is string => typeof item === "string") : [];
}

export function interactionsApp(deps: InteractionDeps) {
  const { identity, sql, logger, limiter } = deps;
  const app = new Hono<Env>();
  // Forms of a few fields: a body past 16 KiB is refused while it streams, never buffered.
  app.use("*", closeWhenBodyUnread);
  app.use("*", limitBody(SMALL_BODY_MAX_BYTES));
  const base = `${identity.mountPath}/interaction`;
  const catalogue = (c: Context<Env>) =>
    catalogueFor(identity.catalogues, c.req.header("accept-language"), c.req.query("locale"));
  const address = (c: Context<Env>) =>
    clientAddress(c.env.incoming.socket.remoteAddress, c.req.header("x-forwarded-for"), deps.trustedProxies);
  const resourceOf = (indicator: string): TjmResource | undefined =>
    identity.resources.find((resource) => resource.indicator === indicator);

  /** The interaction, or an error page when it expired or belongs to another browser. */
  async function details(c: Context<Env>) {
    try {
      return await identity.current().interactionDetails(...nodePair(c));
    } catch (err) {
      logger.debug("interaction not found", { err });
      return undefined;
    }
  }

  const expired = (c: Context<Env>) =>
    page(
      c,
      errorPage({
        catalogue: catalogue(c),
        error: "invalid_request",
        description: catalogue(c).text("error.expiredInteraction"),
      }),
      400,
    );

  async function finish(c: Context<Env>, result: Record<string, unknown>) {
    const to = await identity
      .current()
      .interactionResult(...nodePair(c), result, { mergeWithLastSubmission: false });
    return c.redirect(to, 303);
  }

  async function clientName(clientId: string | undefined): Promise<string> {
    const client = clientId ? await identity.current().Client.find(clientId) : undefined;
    return client?.clientName ?? clientId ?? "";
  }

  app.get(`${base}/:uid`, async (c) => {
    const interaction = await details(c);
    if (!interaction || interaction.uid !== c.req.param("uid")) return expired(c);
    const name = await clientName(interaction.params.client_id as string | undefined);
    if (interaction.prompt.name === "login") {
      return page(
        c,
        loginPage({ catalogue: catalogue(c), action: `${base}/${interaction.uid}/login`, clientName: name }),
      );
    }
    const missing = interaction.prompt.details as { missingOIDCScope?: string[] };
    return page(
      c,
      consentPage({
        catalogue: catalogue(c),
        action: `${base}/${interaction.uid}/consent`,
        abortAction: `${base}/${interaction.uid}/abort`,
        clientName: name,
        scopes: missing.missingOIDCScope ?? [],
        resources: indicators(interaction.params).flatMap((indicator) => {
          const resource = resourceOf(indicator);
          return resource ? [resource.name] : [];
        }),
      }),
    );
  });

  app.post(`${base}/:uid/login`, async (c) => {
    const interaction = await details(c);
    if (!interaction || interaction.uid !== c.req.param("uid") || interaction.prompt.name !== "login") {
      return expired(c);
    }
    const clientId = interaction.params.client_id as string | undefined;
    const name = await clientName(clientId);
    const from = address(c);
    const again = (
      email: string,
      problem: "invalid-credentials" | "too-many-attempts",
      retryAfterSeconds?: number,
    ) =>
      page(
        c,
        loginPage({
          catalogue: catalogue(c),
          action: `${base}/${interaction.uid}/login`,
          clientName: name,
          email,
          problem,
          retryAfterMinutes: retryAfterSeconds === undefined ? undefined : Math.ceil(retryAfterSeconds / 60),
        }),
        problem === "too-many-attempts" ? 429 : 200,
        retryAfterSeconds,
      );
    const tooManyAttempts = async (email: string, retryAfterSeconds: number) => {
      await writeAuditEvent(sql, {
        event: "auth.sign-in",
        result: "failure",
        clientId,
        address: from,
        details: { reason: "too-many-attempts" },
      });
      logger.info("sign-in refused", { reason: "too-many-attempts", clientId, address: from });
      return again(email, "too-many-attempts", retryAfterSeconds);
    };

    // A refused address is answered before its form is read.
    const addressRefusedFor = await limiter.addressRefusal(from ?? "unknown");
    if (addressRefusedFor !== undefined) return tooManyAttempts("", addressRefusedFor);
    const form = await c.req.parseBody();
    const email = typeof form.email === "string" ? form.email.trim() : "";
    const password = typeof form.password === "string" ? form.password : "";
    // No account can have such an address or password: a bad request, refused before it is
    // counted (the limiter counts by the address's key), looked up or hashed.
    const identifierProblem = emailKeyProblem(email);
    if (identifierProblem || password.length > MAX_PASSWORD_LENGTH) {
      return page(
        c,
        errorPage({
          catalogue: catalogue(c),
          error: "invalid_request",
          description:
            identifierProblem?.message ?? `a password is at most ${MAX_PASSWORD_LENGTH} characters`,
          backHref: `${base}/${interaction.uid}`,
        }),
        400,
      );
    }
    const reserved = await limiter.reserve({ email, address: from ?? "unknown" });
    if (!reserved.allowed) return tooManyAttempts(email, reserved.retryAfterSeconds);
    const candidate = await findSignInCandidate(sql, email);
    // An unknown or disabled account costs one password verification too: the answer and its
    // timing are the same whether or not the account exists.
    const verified =
      candidate?.passwordHash && !candidate.disabled
        ? await verifyPassword(candidate.passwordHash, password)
        : await verifyUnknownAccountPassword(password).then(() => false);
    if (!verified || !candidate) {
      await limiter.failed(reserved.reservation);
      await writeAuditEvent(sql, {
        event: "auth.sign-in",
        result: "failure",
        actorAccountId: candidate?.id,
        clientId,
        address: from,
        details: { reason: candidate?.disabled ? "account-disabled" : "invalid-credentials" },
      });
      logger.info("sign-in refused", {
        reason: candidate?.disabled ? "account-disabled" : "invalid-credentials",
        accountId: candidate?.id,
        clientId,
        address: from,
      });
      return again(email, "invalid-credentials");
    }
    await limiter.succeeded(reserved.reservation);
    if (candidate.passwordHash && needsRehash(candidate.passwordHash)) {
      await sql`update accounts set password_hash = ${await hashPassword(password)}, updated_at = now()
                where id = ${candidate.id}`;
    }
    // A request naming resources of which the account may hold none (a client asking only for
    // the operations audience, signing in a non-operator) ends here; one naming any it may hold
    // goes on, and its grant and tokens leave the others out (configuration.ts).
    const account = await findProviderAccount(sql, candidate.id);
    const requested = indicators(interaction.params).flatMap((indicator) => resourceOf(indicator) ?? []);
    if (
      requested.length > 0 &&
      !requested.some((resource) => accountMayHold(resource, account?.roles ?? []))
    ) {
      const roles = [...new Set(requested.flatMap((resource) => requiredRole(resource) ?? []))];
      await writeAuditEvent(sql, {
        event: "auth.sign-in",
        result: "failure",
        actorAccountId: candidate.id,
        clientId,
        address: from,
        details: { reason: "missing-role", roles },
      });
      return finish(c, {
        error: "access_denied",
        error_description: `this account does not hold the ${roles.join(" or ")} role the requested audience requires`,
      });
    }
    await writeAuditEvent(sql, {
      event: "auth.sign-in",
      result: "success",
      actorAccountId: candidate.id,
      clientId,
      address: from,
    });
    logger.info("sign-in succeeded", { accountId: candidate.id, clientId, address: from });
    return finish(c, { login: { accountId: candidate.id, amr: ["pwd"], remember: true } });
  });

  app.post(`${base}/:uid/consent`, async (c) => {
    const interaction = await details(c);
    if (!interaction || interaction.uid !== c.req.param("uid") || interaction.prompt.name !== "consent") {
      return expired(c);
    }
    const form = await c.req.parseBody();
    if (form.decision !== "allow") {
      return finish(c, {
        error: "access_denied",
        error_description: "the account did not allow the request",
      });
    }
    const provider = identity.current();
    const accountId = interaction.session?.accountId as string;
    const clientId = interaction.params.client_id as string;
    const grant =
      (interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined) ??
      new provider.Grant({ accountId, clientId });
    const missing = interaction.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    for (const indicator of indicators(interaction.params))
      grant.addResourceScope(indicator, RESOURCE_ACCESS_SCOPE);
    const grantId = await grant.save();
    return finish(c, { consent: { grantId } });
  });

  app.post(`${base}/:uid/abort`, async (c) => {
    const interaction = await details(c);
    if (!interaction) return expired(c);
    return finish(c, { error: "access_denied", error_description: "the account cancelled the sign-in" });
  });

  return app;
}
