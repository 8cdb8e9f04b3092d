/**
 * The account's own page, which every signed-in account reaches: its profile and avatar, e-mail
 * and phone (changed through a code), password, two-step sign-in, sessions, the accounts
 * remembered in this browser, connected apps, developer apps, logging out and deleting the
 * account, all through `/api/me…` (the console holds the token); then what this console offers
 * it. An account without the operator role lands here instead of pages whose every request
 * would be refused. account.js and the files it calls fill it.
 */
import { LANGUAGE_NAMES, LOCALES } from "@tjm/platform/locale";
import {
  consolePage,
  escapeHtml,
  messageHtml,
  type Offered,
  type PageContext,
  pageTexts,
} from "../pages/layout.ts";
import { developerAppsSection } from "./account-developer-apps-view.ts";
import { accountMfaSection } from "./account-mfa-view.ts";
import { errorsId, ids, type Section, sections } from "./element-ids.js";
import { field, headers, sectionOpening, sectionStatus, type Texts } from "./view-parts.ts";

/** The profile's gender answers (the Manager's open list; self-described takes the person's words). */
const GENDERS = ["female", "male", "non-binary", "prefer-not-to-say", "self-described"] as const;

/** A field of a section's form: `prefix-name` is its control's id. */
const sectionField = (
  prefix: string,
  name: string,
  label: string,
  control: (id: string, describedBy: string) => string,
) => field(`${prefix}-${name}`, label, control(`${prefix}-${name}`, errorsId(`${prefix}-${name}`)));

function avatarRow(t: Texts): string {
  return `<div class="avatar-row">
<img id="${ids.avatarImage}" class="avatar" width="96" height="96" alt="${t("account.profile.avatarAlt")}" hidden>
<p id="${ids.noAvatar}">${t("account.profile.noAvatar")}</p>
<form id="${ids.avatarForm}" class="stacked">
<div class="field"><label for="${ids.avatarFile}">${t("account.profile.avatarFile")}</label>
<input id="${ids.avatarFile}" name="avatar" type="file" accept="image/png,image/jpeg,image/webp"></div>
<div class="buttons"><button type="submit">${t("account.profile.uploadAvatar")}</button>
<button type="button" id="${ids.removeAvatar}" class="secondary" hidden>${t("account.profile.removeAvatar")}</button></div>
</form>
</div>`;
}

function profileSection(t: Texts, status: (section: Section) => string): string {
  const genders = GENDERS.map(
    // ICU select keys take no hyphen: the message names the answers with underscores.
    (gender) =>
      `<option value="${gender}">${t("account.profile.genderValue", { gender: gender.replaceAll("-", "_") })}</option>`,
  ).join("");
  const locales = LOCALES.map(
    (locale) => `<option value="${locale}" lang="${locale}">${escapeHtml(LANGUAGE_NAMES[locale])}</option>`,
  ).join("");
  return `${sectionOpening(sections.profile, t("account.profile.heading"))}
${avatarRow(t)}
<form id="${ids.profileForm}" class="stacked" novalidate>
${sectionField("profile", "name", t("account.profile.name"), (id, describedBy) => `<input id="${id}" name="name" maxlength="100" autocomplete="name" required aria-describedby="${describedBy}">`)}
${sectionField("profile", "dateOfBirth", t("account.profile.dateOfBirth"), (id, describedBy) => `<input id="${id}" name="dateOfBirth" type="date" autocomplete="bday" aria-describedby="${describedBy}">`)}
${sectionField("profile", "gender", t("account.profile.gender"), (id, describedBy) => `<select id="${id}" name="gender" aria-describedby="${describedBy}"><option value="">${t("account.profile.genderNone")}</option>${genders}</select>`)}
<div class="field" id="${ids.genderDescriptionField}" hidden><label for="profile-genderDescription">${t("account.profile.genderDescription")}</label>
<input id="profile-genderDescription" name="genderDescription" maxlength="50" aria-describedby="${errorsId("profile-genderDescription")}">
<ul id="${errorsId("profile-genderDescription")}" class="field-errors"></ul></div>
${sectionField("profile", "locale", t("account.profile.locale"), (id, describedBy) => `<select id="${id}" name="locale" aria-describedby="${describedBy}"><option value="">${t("account.profile.localeDefault")}</option>${locales}</select>`)}
<button type="submit">${t("account.profile.save")}</button>
</form>
${status(sections.profile)}
</section>`;
}

function identifiersSection(t: Texts, status: (section: Section) => string): string {
  return `${sectionOpening(sections.identifiers, t("account.identifiers.heading"))}
<dl id="${ids.identifiersSummary}" class="summary"></dl>
<form id="${ids.identifiersForm}" class="stacked" novalidate>
${sectionField("identifiers", "email", t("account.identifiers.newEmail"), (id, describedBy) => `<input id="${id}" name="email" type="email" autocomplete="email" dir="ltr" aria-describedby="${describedBy}">`)}
${sectionField("identifiers", "phone", t("account.identifiers.newPhone"), (id, describedBy) => `<input id="${id}" name="phone" type="tel" autocomplete="tel" dir="ltr" aria-describedby="${describedBy}">`)}
<button type="submit">${t("account.identifiers.request")}</button>
</form>
<form id="${ids.codeForm}" class="stacked" novalidate hidden>
<p id="${ids.codeIntro}"></p>
${sectionField("identifiers", "code", t("account.identifiers.codeLabel"), (id, describedBy) => `<input id="${id}" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6" dir="ltr" aria-describedby="${describedBy}">`)}
<div class="buttons"><button type="submit">${t("account.identifiers.verify")}</button>
<button type="button" id="${ids.cancelChange}" class="secondary">${t("account.identifiers.cancel")}</button></div>
</form>
${status(sections.identifiers)}
</section>`;
}

function passwordSection(t: Texts, status: (section: Section) => string): string {
  return `${sectionOpening(sections.password, t("account.password.heading"))}
<form id="${ids.passwordForm}" class="stacked" novalidate>
${sectionField("password", "current", t("account.password.current"), (id, describedBy) => `<input id="${id}" name="current_password" type="password" autocomplete="current-password" required aria-describedby="${describedBy}">`)}
${sectionField("password", "new", t("account.password.new"), (id, describedBy) => `<input id="${id}" name="new_password" type="password" autocomplete="new-password" required aria-describedby="${describedBy}">`)}
<div class="check"><input id="password-revoke" name="revoke_other_sessions" type="checkbox"><label for="password-revoke">${t("account.password.revokeOthers")}</label></div>
<button type="submit">${t("account.password.change")}</button>
</form>
${status(sections.password)}
</section>`;
}

/** Where the account is signed in: its sessions, the accounts remembered here, the connected apps. */
function signedInSections(t: Texts, status: (section: Section) => string): string {
  return `${sectionOpening(sections.sessions, t("account.sessions.heading"))}
<table id="${ids.sessionsTable}">
<caption>${t("account.sessions.caption")}</caption>
${headers(t, ["account.sessions.colBrowser", "account.sessions.colAddress", "account.sessions.colCreated", "account.sessions.colLastUsed", "account.sessions.colApps", "account.sessions.colActions"])}
<tbody></tbody>
</table>
<p><button type="button" id="${ids.revokeOthers}" class="secondary">${t("account.sessions.revokeOthers")}</button></p>
${status(sections.sessions)}
</section>
${sectionOpening(sections.remembered, t("account.remembered.heading"))}
<p>${t("account.remembered.intro")}</p>
<ul id="${ids.rememberedList}" class="accounts"></ul>
<p><button type="button" id="${ids.anotherAccount}" class="secondary">${t("account.remembered.another")}</button></p>
${status(sections.remembered)}
</section>
${sectionOpening(sections.apps, t("account.apps.heading"))}
<ul id="${ids.appsList}" class="apps"></ul>
${status(sections.apps)}
</section>`;
}

/** Logging out (of this session, this account, or this browser) and deleting the account. */
function leavingSections(t: Texts, status: (section: Section) => string): string {
  return `${sectionOpening(sections.logout, t("account.logout.heading"))}
<p>${t("account.logout.explain")}</p>
<div class="buttons">
<button type="button" data-logout="session" class="secondary">${t("account.logout.session")}</button>
<button type="button" data-logout="account" class="secondary">${t("account.logout.account")}</button>
<button type="button" data-logout="browser" class="secondary">${t("account.logout.browser")}</button>
</div>
${status(sections.logout)}
</section>
${sectionOpening(sections.delete, t("account.delete.heading"))}
<p class="warning">${t("account.delete.explain")}</p>
<form id="${ids.deleteForm}" class="stacked" novalidate>
<div class="check"><input id="delete-confirm" name="confirm" type="checkbox" required><label for="delete-confirm">${t("account.delete.understand")}</label></div>
<button type="submit" class="danger">${t("account.delete.submit")}</button>
</form>
${status(sections.delete)}
</section>`;
}

/** What this console offers the account: the operations views, client management. */
function offersSection(context: PageContext, offered: Offered): string {
  const t = pageTexts(context);
  const { catalogue } = context;
  const operations = offered.operations
    ? messageHtml(catalogue, "account.operationsOffered", {
        operations: `<strong>${t("account.operations")}</strong>`,
        jobs: `<a href="/jobs">${t("account.jobs")}</a>`,
        workers: `<a href="/workers">${t("account.workers")}</a>`,
        enrollment: `<a href="/enrollment">${t("account.enrollment")}</a>`,
      })
    : messageHtml(catalogue, "account.operationsNotOffered", {
        operations: `<strong>${t("account.operations")}</strong>`,
      });
  const clients = messageHtml(
    catalogue,
    offered.clientAdministration ? "account.clientsOffered" : "account.clientsNotOffered",
    {
      clients: offered.clientAdministration
        ? `<a href="/clients">${t("account.clients")}</a>`
        : `<strong>${t("account.clients")}</strong>`,
    },
  );
  return `<section aria-labelledby="offers-heading"><h2 id="offers-heading">${t("account.offersHeading")}</h2>
<ul id="offered"><li>${operations}</li><li>${clients}</li></ul>
<p>${t("account.rolesNote")}</p>
</section>`;
}

export function accountView(context: PageContext, offered: Offered, accountId: string): string {
  const t = pageTexts(context);
  const { catalogue } = context;
  const status = (section: Section) => sectionStatus(section, t("account.reauth.signIn"));
  return consolePage(
    context,
    "account",
    catalogue.text("account.title"),
    `<h1>${t("account.title")}</h1>
<p>${messageHtml(catalogue, "account.signedInAs", { account: `<code>${escapeHtml(accountId)}</code>` })}</p>
<p id="${ids.viewStatus}" class="status" role="status"></p>
${profileSection(t, status)}
${identifiersSection(t, status)}
${passwordSection(t, status)}
${accountMfaSection(t, status)}
${signedInSections(t, status)}
${developerAppsSection(context, status)}
${leavingSections(t, status)}
${offersSection(context, offered)}`,
    offered,
  );
}
