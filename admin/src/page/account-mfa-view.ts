/**
 * The static part of the account page's two-step sign-in section (account-mfa.js fills it): the
 * factors' table, the buttons that start an enrolment, the QR code and key of a TOTP one, the
 * code step, and the recovery codes shown once with their print-only sheet.
 */
import type { pageTexts } from "../pages/layout.ts";

export function accountMfaSection(t: ReturnType<typeof pageTexts>, status: (id: string) => string): string {
  const columns = ["colFactor", "colDestination", "colCreated", "colLastUsed", "colActions"] as const;
  return `<section id="mfa" aria-labelledby="mfa-heading"><h2 id="mfa-heading">${t("account.mfa.heading")}</h2>
<p>${t("account.mfa.intro")}</p>
<table id="mfa-table">
<caption>${t("account.mfa.caption")}</caption>
<thead><tr>${columns.map((column) => `<th scope="col">${t(`account.mfa.${column}`)}</th>`).join("")}</tr></thead>
<tbody></tbody>
</table>
<p id="mfa-remaining"></p>
<div class="check"><input id="mfa-revoke" type="checkbox"><label for="mfa-revoke">${t("account.mfa.revokeOthers")}</label></div>
<div class="buttons">
<button type="button" data-mfa-start="totp">${t("account.mfa.addTotp")}</button>
<button type="button" data-mfa-start="sms" class="secondary">${t("account.mfa.addSms")}</button>
<button type="button" data-mfa-start="email" class="secondary">${t("account.mfa.addEmail")}</button>
<button type="button" id="mfa-regenerate" class="secondary">${t("account.mfa.regenerate")}</button>
</div>
<div id="mfa-totp" hidden>
<p>${t("account.mfa.scan")}</p>
<img id="mfa-qr" width="200" height="200" alt="${t("account.mfa.qrAlt")}">
<p>${t("account.mfa.secretLabel")} <code id="mfa-secret" dir="ltr"></code></p>
</div>
<form id="mfa-code-form" class="stacked" novalidate hidden>
<p id="mfa-code-intro"></p>
<div class="field"><label for="mfa-code">${t("account.mfa.codeLabel")}</label>
<input id="mfa-code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="64" dir="ltr" aria-describedby="mfa-code-errors">
<ul id="mfa-code-errors" class="field-errors"></ul></div>
<div class="buttons"><button type="submit">${t("account.mfa.verify")}</button>
<button type="button" id="mfa-cancel" class="secondary">${t("account.mfa.cancel")}</button></div>
</form>
<div id="mfa-recovery" hidden>
<p>${t("account.mfa.recoveryIntro")}</p>
<ol id="mfa-recovery-list" class="recovery-codes" dir="ltr"></ol>
<div class="buttons"><button type="button" id="mfa-print" class="secondary">${t("account.mfa.print")}</button>
<button type="button" id="mfa-saved">${t("account.mfa.saved")}</button></div>
</div>
<div id="mfa-print-sheet" class="print-only"><h2>${t("account.mfa.printTitle")}</h2><ol class="recovery-codes" dir="ltr"></ol></div>
${status("mfa")}
</section>`;
}
