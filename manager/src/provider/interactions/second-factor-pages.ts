/**
 * The second step of sign-in as a complete HTML document, like the sign-in page (pages.ts):
 * which factor (each enrolled one, and a recovery code while any remain) and the code. An SMS
 * or e-mail factor has its own button that sends a code. Pure; every outside value escaped.
 */
import { escapeHtml } from "@tjm/platform/html";
import type { Factor } from "../../identity/factors/index.ts";
import type { Catalogue } from "./messages.ts";
import { htmlDocument, withLocale } from "./pages.ts";

export type SecondFactorProblem =
  | "wrong-code"
  | "code-used"
  | "too-many-attempts"
  | "too-many-sends"
  | "not-sent";

/** The form value naming a method: `<type>:<factor id>`, or `recovery`. */
export const methodValue = (factor: Factor) => `${factor.type}:${factor.id}`;
export const RECOVERY_METHOD = "recovery";

export interface SecondFactorPageData {
  catalogue: Catalogue;
  /** Where the code posts; the send buttons post to `sendAction`. */
  action: string;
  sendAction: string;
  factors: Factor[];
  recoveryCodesRemaining: number;
  /** The method checked: the one last used on this page, else the first. */
  selected?: string;
  /** The masked destination a code was just sent to. */
  sentTo?: string;
  problem?: SecondFactorProblem;
  retryAfterMinutes?: number;
}

function problemText(catalogue: Catalogue, p: SecondFactorPageData): string | undefined {
  const minutes = Math.max(1, p.retryAfterMinutes ?? 1);
  switch (p.problem) {
    case undefined:
      return undefined;
    case "wrong-code":
      return catalogue.text("factor.wrongCode");
    case "code-used":
      return catalogue.text("factor.codeUsed");
    case "not-sent":
      return catalogue.text("factor.notSent");
    case "too-many-attempts":
      return catalogue.text("factor.tooManyAttempts", { minutes });
    case "too-many-sends":
      return catalogue.text("factor.tooManySends", { minutes });
  }
}

export function secondFactorPage(p: SecondFactorPageData): string {
  const { catalogue } = p;
  const methods = [
    ...p.factors.map((factor) => ({
      value: methodValue(factor),
      text:
        factor.type === "totp"
          ? catalogue.text("factor.methodTotp")
          : catalogue.text(factor.type === "sms" ? "factor.methodSms" : "factor.methodEmail", {
              destination: factor.maskedDestination ?? "",
            }),
    })),
    ...(p.recoveryCodesRemaining > 0
      ? [{ value: RECOVERY_METHOD, text: catalogue.text("factor.methodRecovery") }]
      : []),
  ];
  const selected = methods.some((method) => method.value === p.selected) ? p.selected : methods[0]?.value;
  const problem = problemText(catalogue, p);
  const described = problem ? ` aria-describedby="problem"` : "";
  const radios = methods
    .map(
      (method) =>
        `<label><input type="radio" name="method" value="${escapeHtml(method.value)}"${method.value === selected ? " checked" : ""}> <span dir="auto">${escapeHtml(method.text)}</span></label>`,
    )
    .join("\n");
  const sendButtons = p.factors
    .filter((factor) => factor.type !== "totp")
    .map(
      (factor) =>
        `<button type="submit" class="secondary" name="method" value="${escapeHtml(methodValue(factor))}" formaction="${escapeHtml(withLocale(catalogue, p.sendAction))}" formnovalidate>${escapeHtml(catalogue.text("factor.send", { destination: factor.maskedDestination ?? "" }))}</button>`,
    )
    .join("\n");
  return htmlDocument(
    catalogue,
    catalogue.text("factor.title"),
    `<h1>${escapeHtml(catalogue.text("factor.heading"))}</h1>
<p class="context">${escapeHtml(catalogue.text("factor.intro"))}</p>
${p.sentTo === undefined ? "" : `<p role="status">${escapeHtml(catalogue.text("factor.codeSent", { destination: p.sentTo }))}</p>\n`}${problem === undefined ? "" : `<p id="problem" class="problem" role="alert">${escapeHtml(problem)}</p>\n`}<form method="post" action="${escapeHtml(withLocale(catalogue, p.action))}">
<fieldset class="field">
<legend>${escapeHtml(catalogue.text("factor.methodLegend"))}</legend>
${radios}
</fieldset>
<div class="field">
<label for="code">${escapeHtml(catalogue.text("factor.codeLabel"))} <span class="required">${escapeHtml(catalogue.text("form.required"))}</span></label>
<input id="code" name="code" type="text" dir="ltr" inputmode="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="64" required autofocus${described}${p.problem === "wrong-code" ? ` aria-invalid="true"` : ""}>
</div>
<div class="actions">
<button type="submit" class="primary">${escapeHtml(catalogue.text("factor.verify"))}</button>
${sendButtons}
</div>
</form>`,
    p.action.slice(0, p.action.lastIndexOf("/")),
  );
}
