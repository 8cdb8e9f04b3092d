/**
 * The account page's developer-apps section as the server renders it (the script,
 * account-developer-apps.js, fills the list and runs the form): the account's own OAuth apps.
 */
import { type PageContext, pageTexts } from "../pages/layout.ts";

/** Grace periods offered for the replaced secret, in seconds (the Manager takes 0..7 days). */
export const GRACE_PERIODS = [
  { seconds: 0, label: "common.graceNone" },
  { seconds: 3600, label: "common.graceHour" },
  { seconds: 86_400, label: "common.graceDay" },
  { seconds: 604_800, label: "common.graceWeek" },
] as const;

/** `status`: the account page's status line and sign-in-again offer of a section. */
export function developerAppsSection(context: PageContext, status: (id: string) => string): string {
  const t = pageTexts(context);
  const graces = GRACE_PERIODS.map(
    (grace) => `<option value="${grace.seconds}">${t(grace.label)}</option>`,
  ).join("");
  const field = (name: string, label: string, input: string) =>
    `<div class="field"><label for="developer-app-${name}">${label}</label>
${input}
<ul id="developer-app-${name}-errors" class="field-errors"></ul></div>`;
  return `<section id="developer-apps" aria-labelledby="developer-apps-heading"><h2 id="developer-apps-heading">${t("account.developerApps.heading")}</h2>
<p>${t("account.developerApps.intro", { limit: 10 })}</p>
<ul id="developer-apps-list" class="apps"></ul>
<div class="field"><label for="developer-app-grace">${t("account.developerApps.grace")}</label>
<select id="developer-app-grace" name="grace">${graces}</select></div>
<section id="developer-app-secret" aria-labelledby="developer-app-secret-heading" hidden>
<h3 id="developer-app-secret-heading"></h3>
<p class="warning">${t("account.developerApps.copyNow")}</p>
<label for="developer-app-secret-value">${t("account.developerApps.secret")}</label>
<div class="copy-row"><input id="developer-app-secret-value" readonly spellcheck="false" dir="ltr"></div>
</section>
<form id="developer-app-form" class="stacked" novalidate>
<fieldset><legend id="developer-app-form-legend">${t("account.developerApps.create")}</legend>
${field("name", t("account.developerApps.name"), '<input id="developer-app-name" name="name" maxlength="200" required autocomplete="off" aria-describedby="developer-app-name-errors">')}
${field(
  "type",
  t("account.developerApps.type"),
  `<select id="developer-app-type" name="type" aria-describedby="developer-app-type-errors"><option value="confidential">${t("account.developerApps.confidential")}</option><option value="public">${t("account.developerApps.public")}</option></select>`,
)}
${field(
  "applicationType",
  t("account.developerApps.applicationType"),
  `<select id="developer-app-applicationType" name="applicationType" aria-describedby="developer-app-applicationType-errors"><option value="web">${t("account.developerApps.web")}</option><option value="native">${t("account.developerApps.native")}</option></select>`,
)}
${field("redirectUris", t("account.developerApps.redirectUris"), '<textarea id="developer-app-redirectUris" name="redirectUris" rows="2" dir="ltr" spellcheck="false" aria-describedby="developer-app-redirectUris-errors"></textarea>')}
<div class="check"><input id="developer-app-refreshTokens" name="refreshTokens" type="checkbox"><label for="developer-app-refreshTokens">${t("account.developerApps.refreshTokens")}</label></div>
<div class="buttons"><button type="submit">${t("account.developerApps.create")}</button>
<button type="button" id="developer-app-cancel" class="secondary" hidden>${t("account.developerApps.cancel")}</button></div>
</fieldset>
</form>
${status("developer-apps")}
</section>`;
}
