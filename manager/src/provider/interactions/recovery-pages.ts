/**
 * The recovery pages as complete HTML documents, like the sign-in page (pages.ts): the
 * identifier, the code, the new password, and the end. Pure; every outside value escaped. The
 * language chosen on the sign-in or identifier page stays in every form's action (`?locale=`).
 */
import { escapeHtml } from "@tjm/platform/html";
import type { PasswordProblemCode } from "../../identity/passwords.ts";
import type { RecoveryChannel } from "../../identity/recovery/index.ts";
import type { Catalogue, MessageKey } from "./messages.ts";
import { htmlDocument, withLocale } from "./pages.ts";

export type RecoveryProblem = "invalid-identifier" | "too-many-attempts" | "wrong-code";

function required(catalogue: Catalogue): string {
  return `<span class="required">${escapeHtml(catalogue.text("form.required"))}</span>`;
}

function problemParagraph(text: string | undefined): string {
  return text === undefined ? "" : `<p id="problem" class="problem" role="alert">${escapeHtml(text)}</p>\n`;
}

function problemText(catalogue: Catalogue, problem: RecoveryProblem | undefined, retryAfterMinutes?: number) {
  if (problem === undefined) return undefined;
  if (problem === "invalid-identifier") return catalogue.text("recovery.invalidIdentifier");
  if (problem === "wrong-code") return catalogue.text("recovery.wrongCode");
  return catalogue.text("recovery.tooManyAttempts", { minutes: Math.max(1, retryAfterMinutes ?? 1) });
}

export interface IdentifierPageData {
  catalogue: Catalogue;
  /** Where the form posts; also the page the language switch reloads. */
  action: string;
  identifier?: string;
  channel?: RecoveryChannel;
  problem?: RecoveryProblem;
  retryAfterMinutes?: number;
}

/** Step 1: which identifier, and the channel to send the code on. */
export function identifierPage(p: IdentifierPageData): string {
  const { catalogue } = p;
  const channel = p.channel ?? "EMAIL";
  const described = p.problem ? ` aria-describedby="problem"` : "";
  const radio = (value: RecoveryChannel, key: MessageKey) =>
    `<label><input type="radio" name="channel" value="${value}"${channel === value ? " checked" : ""}> ${escapeHtml(catalogue.text(key))}</label>`;
  return htmlDocument(
    catalogue,
    catalogue.text("recovery.title"),
    `<h1>${escapeHtml(catalogue.text("recovery.heading"))}</h1>
<p class="context">${escapeHtml(catalogue.text("recovery.intro"))}</p>
${problemParagraph(problemText(catalogue, p.problem, p.retryAfterMinutes))}<form method="post" action="${escapeHtml(withLocale(catalogue, p.action))}">
<fieldset class="field">
<legend>${escapeHtml(catalogue.text("recovery.channelLegend"))}</legend>
${radio("EMAIL", "recovery.channelEmail")}
${radio("SMS", "recovery.channelSms")}
</fieldset>
<div class="field">
<label for="identifier">${escapeHtml(catalogue.text("recovery.identifierLabel"))} ${required(catalogue)}</label>
<input id="identifier" name="identifier" type="text" dir="ltr" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="320" required autofocus value="${escapeHtml(p.identifier ?? "")}"${described}${p.problem === "invalid-identifier" ? ` aria-invalid="true"` : ""}>
</div>
<div class="actions">
<button type="submit" class="primary">${escapeHtml(catalogue.text("recovery.send"))}</button>
</div>
</form>`,
    p.action,
  );
}

export interface CodePageData {
  catalogue: Catalogue;
  action: string;
  /** The identifier page: "ask for a new code". */
  restartHref: string;
  identifier: string;
  channel: RecoveryChannel;
  problem?: RecoveryProblem;
  retryAfterMinutes?: number;
}

/** Step 2: the code, with the identifier and channel carried in the form. */
export function codePage(p: CodePageData): string {
  const { catalogue } = p;
  const described = p.problem ? ` aria-describedby="problem"` : "";
  return htmlDocument(
    catalogue,
    catalogue.text("recovery.codeTitle"),
    `<h1>${escapeHtml(catalogue.text("recovery.codeTitle"))}</h1>
<p class="context">${escapeHtml(catalogue.text("recovery.codeSent", { identifier: p.identifier }))}</p>
${problemParagraph(problemText(catalogue, p.problem, p.retryAfterMinutes))}<form method="post" action="${escapeHtml(withLocale(catalogue, p.action))}">
<input type="hidden" name="channel" value="${escapeHtml(p.channel)}">
<input type="hidden" name="identifier" value="${escapeHtml(p.identifier)}">
<div class="field">
<label for="code">${escapeHtml(catalogue.text("recovery.codeLabel"))} ${required(catalogue)}</label>
<input id="code" name="code" type="text" dir="ltr" inputmode="numeric" autocomplete="one-time-code" maxlength="64" required autofocus${described}${p.problem === "wrong-code" ? ` aria-invalid="true"` : ""}>
</div>
<div class="actions">
<button type="submit" class="primary">${escapeHtml(catalogue.text("recovery.verify"))}</button>
</div>
</form>
<p><a href="${escapeHtml(withLocale(catalogue, p.restartHref))}">${escapeHtml(catalogue.text("recovery.askAgain"))}</a></p>`,
  );
}

const PASSWORD_PROBLEMS: Record<PasswordProblemCode, MessageKey> = {
  "too-short": "recovery.passwordTooShort",
  "too-long": "recovery.passwordTooLong",
  common: "recovery.passwordCommon",
  "contains-email": "recovery.passwordContainsEmail",
};

export interface PasswordPageData {
  catalogue: Catalogue;
  action: string;
  /** Carried in the form only: never in a URL, never stored by the page. */
  recoveryToken: string;
  problems?: readonly PasswordProblemCode[];
}

/** Step 3: the new password, and whether every session ends (checked by default). */
export function passwordPage(p: PasswordPageData): string {
  const { catalogue } = p;
  const problems = p.problems ?? [];
  const problemList =
    problems.length === 0
      ? ""
      : `<div id="problem" class="problem" role="alert">${problems.map((code) => `<p>${escapeHtml(catalogue.text(PASSWORD_PROBLEMS[code]))}</p>`).join("")}</div>\n`;
  const described =
    problems.length > 0 ? ` aria-describedby="hint problem" aria-invalid="true"` : ` aria-describedby="hint"`;
  return htmlDocument(
    catalogue,
    catalogue.text("recovery.passwordTitle"),
    `<h1>${escapeHtml(catalogue.text("recovery.passwordTitle"))}</h1>
${problemList}<form method="post" action="${escapeHtml(withLocale(catalogue, p.action))}">
<input type="hidden" name="recovery_token" value="${escapeHtml(p.recoveryToken)}">
<div class="field">
<label for="new_password">${escapeHtml(catalogue.text("recovery.passwordLabel"))} ${required(catalogue)}</label>
<p id="hint" class="context">${escapeHtml(catalogue.text("recovery.passwordHint"))}</p>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="8" maxlength="1024" required autofocus${described}>
</div>
<div class="field">
<label><input type="checkbox" name="revoke_sessions" value="yes" checked> ${escapeHtml(catalogue.text("recovery.revokeSessions"))}</label>
</div>
<div class="actions">
<button type="submit" class="primary">${escapeHtml(catalogue.text("recovery.save"))}</button>
</div>
</form>`,
  );
}

/** The end: the password is set (or the token was not good), and the way back to sign-in. */
export function recoveryDonePage(p: {
  catalogue: Catalogue;
  signInHref: string;
  tokenInvalid?: boolean;
}): string {
  const { catalogue } = p;
  const [title, body] = p.tokenInvalid
    ? [catalogue.text("recovery.title"), catalogue.text("recovery.tokenInvalid")]
    : [catalogue.text("recovery.doneTitle"), catalogue.text("recovery.doneBody")];
  return htmlDocument(
    catalogue,
    title,
    `<h1>${escapeHtml(title)}</h1>
<p${p.tokenInvalid ? ` class="problem" role="alert"` : ""}>${escapeHtml(body)}</p>
<p><a href="${escapeHtml(withLocale(catalogue, p.signInHref))}">${escapeHtml(catalogue.text("recovery.backToSignIn"))}</a></p>`,
  );
}
