/**
 * The recovery pages of an interaction (`<interaction>/recovery…`): "Forgot password?" on the
 * sign-in page leads here, and these forms call the recovery domain (identity/recovery) the
 * public routes call, so the pages answer alike for every identifier as the routes do. Bound to
 * the interaction as the sign-in form is (its cookie: another browser gets the expired page),
 * under the same body limit and page headers; the recovery token travels only in the last
 * form's body.
 */
import type { Context, Hono } from "hono";
import { chooseLocale } from "../../identity/delivery/index.ts";
import {
  identifierProblem,
  RECOVERY_CHANNELS,
  type Recovery,
  type RecoveryChannel,
} from "../../identity/recovery/index.ts";
import type { Catalogue } from "./messages.ts";
import { errorPage } from "./pages.ts";
import { codePage, identifierPage, passwordPage, recoveryDonePage } from "./recovery-pages.ts";

export interface RecoveryPagesContext<E extends object> {
  /** `<mount>/interaction`. */
  base: string;
  /** Set once the Manager is up (the provider starts first); until then the pages are refused. */
  recovery: () => Recovery | undefined;
  catalogue: (c: Context<E>) => Catalogue;
  address: (c: Context<E>) => string | undefined;
  /** The interaction's uid when it is live, in this browser, and at its sign-in prompt. */
  signingIn: (c: Context<E>) => Promise<string | undefined>;
  page: (c: Context<E>, html: string, status?: 200 | 400 | 429 | 503, retryAfterSeconds?: number) => Response;
  expired: (c: Context<E>) => Response;
}

const minutes = (seconds: number) => Math.ceil(seconds / 60);

function field(form: Record<string, unknown>, name: string): string {
  const value = form[name];
  return typeof value === "string" ? value : "";
}

function channelOf(form: Record<string, unknown>): RecoveryChannel {
  const value = field(form, "channel");
  return (RECOVERY_CHANNELS as readonly string[]).includes(value) ? (value as RecoveryChannel) : "EMAIL";
}

export function registerRecoveryPages<E extends object>(
  app: Hono<E>,
  context: RecoveryPagesContext<E>,
): void {
  const { base, catalogue, page } = context;
  const start = (uid: string) => `${base}/${uid}/recovery`;

  /** The interaction and the recovery domain, or the answer that refuses the request. */
  async function ready(c: Context<E>): Promise<{ uid: string; recovery: Recovery } | Response> {
    const uid = await context.signingIn(c);
    if (uid === undefined) return context.expired(c);
    const recovery = context.recovery();
    if (!recovery) {
      const unavailable = errorPage({
        catalogue: catalogue(c),
        error: "temporarily_unavailable",
        backHref: `${base}/${uid}`,
      });
      return page(c, unavailable, 503);
    }
    return { uid, recovery };
  }

  app.get(`${base}/:uid/recovery`, async (c) => {
    const found = await ready(c);
    if (found instanceof Response) return found;
    return page(c, identifierPage({ catalogue: catalogue(c), action: start(found.uid) }));
  });

  app.post(`${base}/:uid/recovery`, async (c) => {
    const found = await ready(c);
    if (found instanceof Response) return found;
    const form = await c.req.parseBody();
    const identifier = field(form, "identifier").trim();
    const channel = channelOf(form);
    const shown = { catalogue: catalogue(c), action: start(found.uid), identifier, channel };
    if (identifier === "" || identifier.length > 320 || identifierProblem(channel, identifier)) {
      return page(c, identifierPage({ ...shown, problem: "invalid-identifier" }), 400);
    }
    const outcome = await found.recovery.requestCode({
      channel,
      identifier,
      locale: chooseLocale({ bodyLocale: shown.catalogue.locale }),
      address: context.address(c) ?? "0.0.0.0",
    });
    if (outcome.outcome === "rate-limited") {
      const retry = outcome.retryAfterSeconds;
      return page(
        c,
        identifierPage({ ...shown, problem: "too-many-attempts", retryAfterMinutes: minutes(retry) }),
        429,
        retry,
      );
    }
    return page(
      c,
      codePage({
        catalogue: shown.catalogue,
        action: `${start(found.uid)}/code`,
        restartHref: start(found.uid),
        identifier,
        channel,
      }),
    );
  });

  app.post(`${base}/:uid/recovery/code`, async (c) => {
    const found = await ready(c);
    if (found instanceof Response) return found;
    const form = await c.req.parseBody();
    const identifier = field(form, "identifier").trim();
    const channel = channelOf(form);
    const code = field(form, "code");
    const shown = {
      catalogue: catalogue(c),
      action: `${start(found.uid)}/code`,
      restartHref: start(found.uid),
      identifier,
      channel,
    };
    if (identifierProblem(channel, identifier) || identifier.length > 320) {
      return page(
        c,
        identifierPage({
          catalogue: shown.catalogue,
          action: start(found.uid),
          problem: "invalid-identifier",
        }),
        400,
      );
    }
    if (code.length === 0 || code.length > 64)
      return page(c, codePage({ ...shown, problem: "wrong-code" }), 400);
    const outcome = await found.recovery.verifyCode({
      channel,
      identifier,
      code,
      address: context.address(c) ?? "0.0.0.0",
    });
    if (outcome.outcome === "rate-limited") {
      const retry = outcome.retryAfterSeconds;
      return page(
        c,
        codePage({ ...shown, problem: "too-many-attempts", retryAfterMinutes: minutes(retry) }),
        429,
        retry,
      );
    }
    if (outcome.outcome === "wrong-code") return page(c, codePage({ ...shown, problem: "wrong-code" }), 400);
    return page(
      c,
      passwordPage({
        catalogue: shown.catalogue,
        action: `${start(found.uid)}/password`,
        recoveryToken: outcome.recoveryToken,
      }),
    );
  });

  app.post(`${base}/:uid/recovery/password`, async (c) => {
    const found = await ready(c);
    if (found instanceof Response) return found;
    const form = await c.req.parseBody();
    const recoveryToken = field(form, "recovery_token");
    const signInHref = `${base}/${found.uid}`;
    const shown = { catalogue: catalogue(c), action: `${start(found.uid)}/password`, recoveryToken };
    const outcome =
      recoveryToken.length === 0 || recoveryToken.length > 128
        ? ({ outcome: "token-invalid", problems: [] } as const)
        : await found.recovery.resetPassword({
            recoveryToken,
            newPassword: field(form, "new_password"),
            revokeSessions: field(form, "revoke_sessions") === "yes",
            address: context.address(c) ?? "0.0.0.0",
            acceptLanguage: undefined,
          });
    switch (outcome.outcome) {
      case "rate-limited":
        return page(
          c,
          recoveryDonePage({ catalogue: shown.catalogue, signInHref, tokenInvalid: true }),
          429,
          outcome.retryAfterSeconds,
        );
      case "token-invalid":
        return page(c, recoveryDonePage({ catalogue: shown.catalogue, signInHref, tokenInvalid: true }), 400);
      case "policy-refused":
        return page(
          c,
          passwordPage({ ...shown, problems: outcome.problems.map((problem) => problem.code) }),
          400,
        );
      case "reset":
        return page(c, recoveryDonePage({ catalogue: shown.catalogue, signInHref }));
    }
  });
}
