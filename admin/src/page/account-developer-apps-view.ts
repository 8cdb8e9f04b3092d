/**
 * The account page's developer-apps section as the server renders it (the script,
 * account-developer-apps.js, fills the list and runs the form): the account's own OAuth apps.
 */
import { type PageContext, pageTexts } from "../pages/layout.ts";
import { errorsId, ids, type Section, sections } from "./element-ids.js";
import { field, sectionOpening } from "./view-parts.ts";

/** Grace periods offered for the replaced secret, in seconds (the Manager takes 0..7 days). */
export const GRACE_PERIODS = [
  { seconds: 0, label: "common.graceNone" },
  { seconds: 3600, label: "common.graceHour" },
  { seconds: 86_400, label: "common.graceDay" },
  { seconds: 604_800, label: "common.graceWeek" },
] as const;

/** `status`: the account page's status line and sign-in-again offer of a section. */
export function developerAppsSection(context: PageContext, status: (section: Section) => string): string {
  const t = pageTexts(context);
  const graces = GRACE_PERIODS.map(
    (grace) => `<option value="${grace.seconds}">${t(grace.label)}</option>`,
  ).join("");
  /** A field of the app's form: `name` its control's name, `developer-app-<name>` its id. */
  const appField = (name: string, label: string, control: (id: string, describedBy: string) => string) =>
    field(
      `developer-app-${name}`,
      label,
      control(`developer-app-${name}`, errorsId(`developer-app-${name}`)),
    );
  return `${sectionOpening(sections.developerApps, t("account.developerApps.heading"))}
<p>${t("account.developerApps.intro", { limit: 10 })}</p>
<ul id="${ids.developerAppsList}" class="apps"></ul>
<div class="field"><label for="${ids.developerAppGrace}">${t("account.developerApps.grace")}</label>
<select id="${ids.developerAppGrace}" name="grace">${graces}</select></div>
<section id="${ids.developerAppSecret}" aria-labelledby="${ids.developerAppSecretHeading}" hidden>
<h3 id="${ids.developerAppSecretHeading}"></h3>
<p class="warning">${t("account.developerApps.copyNow")}</p>
<label for="${ids.developerAppSecretValue}">${t("account.developerApps.secret")}</label>
<div class="copy-row"><input id="${ids.developerAppSecretValue}" readonly spellcheck="false" dir="ltr"></div>
</section>
<form id="${ids.developerAppForm}" class="stacked" novalidate>
<fieldset><legend id="${ids.developerAppFormLegend}">${t("account.developerApps.create")}</legend>
${appField("name", t("account.developerApps.name"), (id, describedBy) => `<input id="${id}" name="name" maxlength="200" required autocomplete="off" aria-describedby="${describedBy}">`)}
${appField("type", t("account.developerApps.type"), (id, describedBy) => `<select id="${id}" name="type" aria-describedby="${describedBy}"><option value="confidential">${t("account.developerApps.confidential")}</option><option value="public">${t("account.developerApps.public")}</option></select>`)}
${appField("applicationType", t("account.developerApps.applicationType"), (id, describedBy) => `<select id="${id}" name="applicationType" aria-describedby="${describedBy}"><option value="web">${t("account.developerApps.web")}</option><option value="native">${t("account.developerApps.native")}</option></select>`)}
${appField("redirectUris", t("account.developerApps.redirectUris"), (id, describedBy) => `<textarea id="${id}" name="redirectUris" rows="2" dir="ltr" spellcheck="false" aria-describedby="${describedBy}"></textarea>`)}
<div class="check"><input id="developer-app-refreshTokens" name="refreshTokens" type="checkbox"><label for="developer-app-refreshTokens">${t("account.developerApps.refreshTokens")}</label></div>
<div class="buttons"><button type="submit">${t("account.developerApps.create")}</button>
<button type="button" id="${ids.developerAppCancel}" class="secondary" hidden>${t("account.developerApps.cancel")}</button></div>
</fieldset>
</form>
${status(sections.developerApps)}
</section>`;
}
