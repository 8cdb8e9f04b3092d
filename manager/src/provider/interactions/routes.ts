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
import type { SignIns } from "../../identity/accounts/index.ts";
import type { SignInFactorDeps } from "../../identity/factors/index.ts";
import type { Recovery } from "../../identity/recovery/index.ts";
import type { ResourceName } from "../../identity/resources.ts";
import { clientAddress } from "../../platform/client-address.ts";
import type { Sql } from "../../platform/db.ts";
import { closeWhenBodyUnread, limitBody, nonPageHeaders, SMALL_BODY_MAX_BYTES } from "../../platform/http.ts";
import { RESOURCE_ACCESS_SCOPE } from "../configuration.ts";
import type { IdentityProvider } from "../index.ts";
import { catalogueFor } from "./messages.ts";
import { consentPage, errorPage, loginPage, PAGE_SOURCES } from "./pages.ts";
import { registerRecoveryPages } from "./recovery.ts";
import { registerSecondFactorPages, type StoredInteraction } from "./second-factor.ts";

export interface InteractionDeps {
  identity: IdentityProvider;
  logger: Logger;
  /** The sign-in decision (identity/accounts): this page only renders its outcome. */
  signIns: SignIns;
  trustedProxies: readonly string[];
  /** The recovery domain behind the recovery pages; undefined until the Manager has started. */
  recovery: () => Recovery | undefined;
  /** Reads the accounts' factors. */
  sql: Sql;
  /** The factor domain behind the second step; undefined until the Manager has started. */
  secondFactors: () => SignInFactorDeps | undefined;
  /** MFA_OPERATOR_SMS_EMAIL_ALLOWED. */
  operatorSmsEmailAllowed: boolean;
}

type Env = { Bindings: HttpBindings };

/** Pages that hold a sign-in form: never cached, and the page headers of their sources. */
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  ...pageHeaders(PAGE_SOURCES),
};

function page(
  c: Context<Env>,
  html: string,
  status: 200 | 400 | 429 | 503 = 200,
  retryAfterSeconds?: number,
) {
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
  const { identity, logger, signIns } = deps;
  const app = new Hono<Env>();
  // Forms of a few fields: a body past 16 KiB is refused while it streams, never buffered.
  app.use("*", nonPageHeaders);
  app.use("*", closeWhenBodyUnread);
  app.use("*", limitBody(SMALL_BODY_MAX_BYTES));
  const base = `${identity.mountPath}/interaction`;
  const catalogue = (c: Context<Env>) =>
    catalogueFor(identity.catalogues, c.req.header("accept-language"), c.req.query("locale"));
  const address = (c: Context<Env>) =>
    clientAddress(c.env.incoming.socket.remoteAddress, c.req.header("x-forwarded-for"), deps.trustedProxies);
  /** The names of the resources an authorization request asks tokens for. */
  const requestedResources = (params: Record<string, unknown>): ResourceName[] =>
    indicators(params).flatMap((indicator) => {
      const resource = identity.resources.find((known) => known.indicator === indicator);
      return resource ? [resource.name] : [];
    });

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

  /** The interaction when it is live, in this browser, and at its sign-in prompt. */
  async function signingIn(c: Context<Env>) {
    const interaction = await details(c);
    const live = interaction && interaction.uid === c.req.param("uid") && interaction.prompt.name === "login";
    return live ? interaction : undefined;
  }

  const secondFactor = registerSecondFactorPages(app, {
    base,
    sql: deps.sql,
    factors: deps.secondFactors,
    operatorSmsEmailAllowed: deps.operatorSmsEmailAllowed,
    catalogue,
    address,
    signingIn: async (c) => (await signingIn(c)) as StoredInteraction | undefined,
    page,
    expired,
    finish,
  });

  app.get(`${base}/:uid`, async (c) => {
    const interaction = await details(c);
    if (!interaction || interaction.uid !== c.req.param("uid")) return expired(c);
    const name = await clientName(interaction.params.client_id as string | undefined);
    if (interaction.prompt.name === "login") {
      const asking = await secondFactor.show(c, interaction as unknown as StoredInteraction);
      if (asking) return asking;
      return page(
        c,
        loginPage({
          catalogue: catalogue(c),
          action: `${base}/${interaction.uid}/login`,
          clientName: name,
          recoveryHref: `${base}/${interaction.uid}/recovery`,
        }),
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
        resources: requestedResources(interaction.params),
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
          recoveryHref: `${base}/${interaction.uid}/recovery`,
          email,
          problem,
          retryAfterMinutes: retryAfterSeconds === undefined ? undefined : Math.ceil(retryAfterSeconds / 60),
        }),
        problem === "too-many-attempts" ? 429 : 200,
        retryAfterSeconds,
      );

    // A refused address is answered before its form is read.
    const addressRefusedFor = await signIns.addressRefusal(from, clientId);
    if (addressRefusedFor !== undefined) return again("", "too-many-attempts", addressRefusedFor);
    const form = await c.req.parseBody();
    const email = typeof form.email === "string" ? form.email.trim() : "";
    const outcome = await signIns.verify({
      email,
      password: typeof form.password === "string" ? form.password : "",
      address: from,
      clientId,
      resources: requestedResources(interaction.params),
    });
    switch (outcome.outcome) {
      case "invalid-request":
        return page(
          c,
          errorPage({
            catalogue: catalogue(c),
            error: "invalid_request",
            description: outcome.description,
            backHref: `${base}/${interaction.uid}`,
          }),
          400,
        );
      case "too-many-attempts":
        return again(email, "too-many-attempts", outcome.retryAfterSeconds);
      case "invalid-credentials":
        return again(email, "invalid-credentials");
      case "role-missing":
        return finish(c, { error: "access_denied", error_description: outcome.description });
      case "signed-in":
        return secondFactor.passwordAccepted(c, interaction as unknown as StoredInteraction, {
          accountId: outcome.accountId,
          email,
        });
    }
  });

  registerRecoveryPages(app, {
    base,
    recovery: deps.recovery,
    catalogue,
    address,
    signingIn: async (c) => {
      const interaction = await details(c);
      const live =
        interaction && interaction.uid === c.req.param("uid") && interaction.prompt.name === "login";
      return live ? interaction.uid : undefined;
    },
    page,
    expired,
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
