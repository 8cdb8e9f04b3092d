/**
 * The second step of sign-in (`<interaction>/second-factor…`). The password step does not finish
 * the login of an account with a factor: it keeps the account in the interaction itself
 * (oidc-provider stores the interaction; panva/node-oidc-provider#661, #679), and only a right
 * factor here finishes it, with the amr and acr of what was used. The interaction is bound to
 * this browser by its cookie, as the sign-in form is.
 */

import type { Locale } from "@tjm/platform/locale";
import type { Context, Hono } from "hono";
import {
  ACR_MFA,
  ACR_PASSWORD,
  type SecondStep,
  type SignInFactorDeps,
  secondStepOf,
  sendSignInCode,
  verifySecondFactor,
} from "../../identity/factors/index.ts";
import type { Sql } from "../../platform/db.ts";
import type { Catalogue } from "./messages.ts";
import { errorPage } from "./pages.ts";
import { RECOVERY_METHOD, type SecondFactorPageData, secondFactorPage } from "./second-factor-pages.ts";

/** Where the interaction keeps the account that passed the password step. */
const PENDING = "tjmSecondFactor";

export interface PendingSecondFactor {
  accountId: string;
  /** As typed at the password step: its key is the sign-in limiter's account key. */
  email: string;
}

/** What oidc-provider's Interaction offers the step (its model: `result` is persisted). */
export interface StoredInteraction {
  uid: string;
  result?: Record<string, unknown> | undefined;
  persist(): Promise<unknown>;
  params: Record<string, unknown>;
}

export interface SecondFactorContext<E extends object> {
  base: string;
  /** Reads the account's factors: whether it has one does not wait for the Manager. */
  sql: Sql;
  /** The Manager's factor domain: set once the Manager has started (the provider starts first). */
  factors: () => SignInFactorDeps | undefined;
  /** MFA_OPERATOR_SMS_EMAIL_ALLOWED. */
  operatorSmsEmailAllowed: boolean;
  catalogue: (c: Context<E>) => Catalogue;
  address: (c: Context<E>) => string | undefined;
  /** The interaction when it is live, in this browser, at its sign-in prompt. */
  signingIn: (c: Context<E>) => Promise<StoredInteraction | undefined>;
  page: (c: Context<E>, html: string, status?: 200 | 400 | 429 | 503, retryAfterSeconds?: number) => Response;
  expired: (c: Context<E>) => Response;
  finish: (c: Context<E>, result: Record<string, unknown>) => Promise<Response>;
}

export function pendingSecondFactor(interaction: { result?: Record<string, unknown> | undefined }) {
  return interaction.result?.[PENDING] as PendingSecondFactor | undefined;
}

const minutes = (seconds: number) => Math.ceil(seconds / 60);

function field(form: Record<string, unknown>, name: string): string {
  const value = form[name];
  return typeof value === "string" ? value : "";
}

/** `<type>:<id>` → the factor id; `recovery` stays. */
function factorIdOf(method: string): string {
  return method === RECOVERY_METHOD ? RECOVERY_METHOD : method.slice(method.indexOf(":") + 1);
}

export function registerSecondFactorPages<E extends object>(app: Hono<E>, context: SecondFactorContext<E>) {
  const { base, catalogue, page } = context;
  const action = (uid: string) => `${base}/${uid}/second-factor`;

  function unavailable(c: Context<E>) {
    return page(
      c,
      errorPage({
        catalogue: catalogue(c),
        error: "temporarily_unavailable",
        description: "the sign-in service is starting",
      }),
      503,
    );
  }

  function render(
    c: Context<E>,
    uid: string,
    step: SecondStep,
    extra: Partial<SecondFactorPageData> = {},
    status: 200 | 429 = 200,
    retryAfterSeconds?: number,
  ) {
    return page(
      c,
      secondFactorPage({
        catalogue: catalogue(c),
        action: action(uid),
        sendAction: `${action(uid)}/code`,
        factors: step.factors,
        recoveryCodesRemaining: step.recoveryCodesRemaining,
        ...extra,
      }),
      status,
      retryAfterSeconds,
    );
  }

  /** The live interaction with its pending account and the factor domain, or the answer refusing. */
  async function ready(c: Context<E>) {
    const interaction = await context.signingIn(c);
    const pending = interaction && pendingSecondFactor(interaction);
    if (!interaction || !pending) return context.expired(c);
    const factors = context.factors();
    if (!factors) return unavailable(c);
    const step = await secondStepOf(factors.sql, pending.accountId, context.operatorSmsEmailAllowed);
    if (!step) return context.expired(c);
    const signIn = {
      accountId: pending.accountId,
      email: pending.email,
      address: context.address(c),
      clientId: interaction.params.client_id as string | undefined,
      locale: catalogue(c).locale as Locale,
    };
    return { interaction, factors, step, signIn };
  }

  app.post(`${base}/:uid/second-factor`, async (c) => {
    const state = await ready(c);
    if (state instanceof Response) return state;
    const form = await c.req.parseBody();
    const method = field(form, "method");
    // Only a method this page offers: a factor left out (an operator's SMS) is not one.
    const offered =
      (method === RECOVERY_METHOD && state.step.recoveryCodesRemaining > 0) ||
      state.step.factors.some((factor) => `${factor.type}:${factor.id}` === method);
    const outcome = await verifySecondFactor(state.factors, state.signIn, {
      factorId: factorIdOf(method),
      code: field(form, "code"),
      offered,
    });
    switch (outcome.outcome) {
      case "verified":
        return context.finish(c, {
          login: { accountId: state.signIn.accountId, amr: outcome.amr, acr: ACR_MFA, remember: true },
        });
      case "too-many-attempts":
        return render(
          c,
          state.interaction.uid,
          state.step,
          {
            selected: method,
            problem: "too-many-attempts",
            retryAfterMinutes: minutes(outcome.retryAfterSeconds),
          },
          429,
          outcome.retryAfterSeconds,
        );
      case "code-used":
        return render(c, state.interaction.uid, state.step, { selected: method, problem: "code-used" });
      case "not-found":
      case "code-wrong":
        return render(c, state.interaction.uid, state.step, { selected: method, problem: "wrong-code" });
    }
  });

  app.post(`${base}/:uid/second-factor/code`, async (c) => {
    const state = await ready(c);
    if (state instanceof Response) return state;
    const method = field(await c.req.parseBody(), "method");
    const factor = state.step.factors.find((candidate) => `${candidate.type}:${candidate.id}` === method);
    if (!factor || factor.type === "totp")
      return render(c, state.interaction.uid, state.step, { problem: "not-sent" });
    const outcome = await sendSignInCode(state.factors, state.signIn, factor.id);
    if (outcome.outcome === "too-many-sends") {
      return render(
        c,
        state.interaction.uid,
        state.step,
        {
          selected: method,
          problem: "too-many-sends",
          retryAfterMinutes: minutes(outcome.retryAfterSeconds),
        },
        429,
        outcome.retryAfterSeconds,
      );
    }
    if (outcome.outcome !== "sent")
      return render(c, state.interaction.uid, state.step, { selected: method, problem: "not-sent" });
    return render(c, state.interaction.uid, state.step, {
      selected: method,
      sentTo: factor.maskedDestination ?? "",
    });
  });

  return {
    /**
     * After a right password: an account without a factor signs in now (amr pwd); one with a
     * factor is kept in the interaction and asked for it.
     */
    async passwordAccepted(c: Context<E>, interaction: StoredInteraction, account: PendingSecondFactor) {
      const step = await secondStepOf(context.sql, account.accountId, context.operatorSmsEmailAllowed);
      if (!step) {
        return context.finish(c, {
          login: { accountId: account.accountId, amr: ["pwd"], acr: ACR_PASSWORD, remember: true },
        });
      }
      interaction.result = { [PENDING]: account };
      await interaction.persist();
      return render(c, interaction.uid, step);
    },
    /** The interaction's page while its account is asked for a factor. */
    async show(c: Context<E>, interaction: StoredInteraction) {
      const pending = pendingSecondFactor(interaction);
      if (!pending) return undefined;
      const step = await secondStepOf(context.sql, pending.accountId, context.operatorSmsEmailAllowed);
      return step ? render(c, interaction.uid, step) : undefined;
    },
  };
}
