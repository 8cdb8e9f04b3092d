/**
 * The static part of the account page's two-step sign-in section (account-mfa.js fills it): the
 * factors' table, the buttons that start an enrolment, the QR code and key of a TOTP one, the
 * code step, and the recovery codes shown once with their print-only sheet.
 */
import { errorsId, ids, type Section, sections } from "./element-ids.js";
import { field, sectionOpening, type Texts } from "./view-parts.ts";

export function accountMfaSection(t: Texts, status: (section: Section) => string): string {
  const columns = ["colFactor", "colDestination", "colCreated", "colLastUsed", "colActions"] as const;
  return `${sectionOpening(sections.mfa, t("account.mfa.heading"))}
<p>${t("account.mfa.intro")}</p>
<table id="${ids.mfaTable}">
<caption>${t("account.mfa.caption")}</caption>
<thead><tr>${columns.map((column) => `<th scope="col">${t(`account.mfa.${column}`)}</th>`).join("")}</tr></thead>
<tbody></tbody>
</table>
<p id="${ids.mfaRemaining}"></p>
<div class="check"><input id="${ids.mfaRevoke}" type="checkbox"><label for="${ids.mfaRevoke}">${t("account.mfa.revokeOthers")}</label></div>
<div class="buttons">
<button type="button" data-mfa-start="totp">${t("account.mfa.addTotp")}</button>
<button type="button" data-mfa-start="sms" class="secondary">${t("account.mfa.addSms")}</button>
<button type="button" data-mfa-start="email" class="secondary">${t("account.mfa.addEmail")}</button>
<button type="button" id="${ids.mfaRegenerate}" class="secondary">${t("account.mfa.regenerate")}</button>
</div>
<div id="${ids.mfaTotp}" hidden>
<p>${t("account.mfa.scan")}</p>
<img id="${ids.mfaQr}" width="200" height="200" alt="${t("account.mfa.qrAlt")}">
<p>${t("account.mfa.secretLabel")} <code id="${ids.mfaSecret}" dir="ltr"></code></p>
</div>
<form id="${ids.mfaCodeForm}" class="stacked" novalidate hidden>
<p id="${ids.mfaCodeIntro}"></p>
${field(ids.mfaCode, t("account.mfa.codeLabel"), `<input id="${ids.mfaCode}" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="64" dir="ltr" aria-describedby="${errorsId(ids.mfaCode)}">`)}
<div class="buttons"><button type="submit">${t("account.mfa.verify")}</button>
<button type="button" id="${ids.mfaCancel}" class="secondary">${t("account.mfa.cancel")}</button></div>
</form>
<div id="${ids.mfaRecovery}" hidden>
<p>${t("account.mfa.recoveryIntro")}</p>
<ol id="${ids.mfaRecoveryList}" class="recovery-codes" dir="ltr"></ol>
<div class="buttons"><button type="button" id="${ids.mfaPrint}" class="secondary">${t("account.mfa.print")}</button>
<button type="button" id="${ids.mfaSaved}">${t("account.mfa.saved")}</button></div>
</div>
<div id="${ids.mfaPrintSheet}" class="print-only"><h2>${t("account.mfa.printTitle")}</h2><ol class="recovery-codes" dir="ltr"></ol></div>
${status(sections.mfa)}
</section>`;
}
