/**
 * The static part of each console view, rendered by the server: headings, forms, empty tables
 * and the regions the page's script fills from `/api/operations/*` and keeps live, every text
 * from the page's catalogue.
 */
import { LANGUAGE_NAMES, LOCALES } from "@tjm/platform/locale";
import type { components } from "@tjm/sdk";
import {
  consolePage,
  escapeHtml,
  messageHtml,
  type Offered,
  type PageContext,
  pageTexts,
} from "../pages/layout.ts";
import type { ConsoleKey } from "../pages/messages.ts";
import { developerAppsSection, GRACE_PERIODS } from "./account-developer-apps-view.ts";
import { accountMfaSection } from "./account-mfa-view.ts";

type Schemas = components["schemas"];

const JOB_STATES = [
  "QUEUED",
  "RUNNING",
  "CANCEL_REQUESTED",
  "CANCELLED",
  "COMPLETED",
  "FAILED",
  "WAITING_FOR_STORAGE",
] as const satisfies readonly Schemas["JobState"][];

const WORKER_POOLS = ["cpu", "nvidia", "intel", "amd"] as const satisfies readonly Schemas["WorkerPool"][];

/** The plan's enums as the API document states them: the submit form offers these. */
const CONTAINERS = [
  "mp4",
  "mov",
  "mkv",
  "webm",
  "mpegts",
] as const satisfies readonly Schemas["PlanOutput"]["container"][];
const VIDEO_CODECS = [
  "h264",
  "hevc",
  "av1",
  "vp9",
] as const satisfies readonly Schemas["PlanVideo"]["codec"][];
const VIDEO_PRESETS = [
  "fastest",
  "fast",
  "medium",
  "slow",
  "slowest",
] as const satisfies readonly Schemas["PlanVideo"]["preset"][];
const AUDIO_CODECS = ["aac", "opus", "mp3"] as const satisfies readonly Schemas["PlanAudio"]["codec"][];

type Unlisted<List extends readonly string[], Union extends string> = Exclude<Union, List[number]>;
// Fails to compile when the API gains a value one of the lists above lacks.
const _everyValueListed: [
  Unlisted<typeof CONTAINERS, Schemas["PlanOutput"]["container"]>,
  Unlisted<typeof VIDEO_CODECS, Schemas["PlanVideo"]["codec"]>,
  Unlisted<typeof VIDEO_PRESETS, Schemas["PlanVideo"]["preset"]>,
  Unlisted<typeof AUDIO_CODECS, Schemas["PlanAudio"]["codec"]>,
] extends [never, never, never, never]
  ? true
  : never = true;

function options(values: readonly string[], anyLabel: string): string {
  return [
    `<option value="">${anyLabel}</option>`,
    ...values.map((v) => `<option value="${v}">${v}</option>`),
  ].join("");
}

function pager(context: PageContext, label: ConsoleKey): string {
  const t = pageTexts(context);
  return `<nav class="pager" aria-label="${t(label)}">
<button type="button" data-page="previous">${t("common.previousPage")}</button>
<span data-page="position"></span>
<button type="button" data-page="next">${t("common.nextPage")}</button>
</nav>`;
}

const headers = (t: ReturnType<typeof pageTexts>, keys: ConsoleKey[]) =>
  `<thead><tr>${keys.map((key) => `<th scope="col">${t(key)}</th>`).join("")}</tr></thead>`;

export function jobsView(context: PageContext, offered: Offered): string {
  const t = pageTexts(context);
  return consolePage(
    context,
    "jobs",
    context.catalogue.text("jobs.title"),
    `<h1>${t("jobs.title")}</h1>
<form id="job-filters" class="filters">
<div class="field"><label for="filter-state">${t("jobs.state")}</label><select id="filter-state" name="state">${options(JOB_STATES, t("common.anyState"))}</select></div>
<div class="field"><label for="filter-pool">${t("jobs.pool")}</label><select id="filter-pool" name="workerPool">${options(WORKER_POOLS, t("common.anyPool"))}</select></div>
<button type="submit">${t("jobs.apply")}</button>
</form>
<p id="view-status" class="status" role="status"></p>
<table id="jobs-table">
<caption>${t("jobs.caption")}</caption>
${headers(t, ["jobs.colJob", "jobs.colState", "jobs.colPool", "jobs.colPriority", "jobs.colProgress", "jobs.colSubmitted"])}
<tbody></tbody>
</table>
${pager(context, "jobs.pages")}`,
    offered,
  );
}

export function jobView(context: PageContext, offered: Offered, jobId: string): string {
  const t = pageTexts(context);
  return consolePage(
    context,
    "job",
    context.catalogue.text("job.title"),
    `<h1>${messageHtml(context.catalogue, "job.heading", { job: `<code>${escapeHtml(jobId)}</code>` })}</h1>
<p><a href="/jobs">${t("job.all")}</a></p>
<p id="view-status" class="status" role="status"></p>
<div id="job-sections">
<section aria-labelledby="summary-heading"><h2 id="summary-heading">${t("job.summary")}</h2><dl id="job-summary" class="summary"></dl></section>
<section aria-labelledby="progress-heading"><h2 id="progress-heading">${t("job.progress")}</h2><div id="job-progress"></div></section>
<section aria-labelledby="actions-heading"><h2 id="actions-heading">${t("job.actions")}</h2>
<ul id="job-actions" class="actions"></ul>
<p id="action-result" class="status" role="status"></p>
</section>
<section aria-labelledby="outputs-heading"><h2 id="outputs-heading">${t("job.outputs")}</h2>
<p id="outputs-status"></p>
<table id="outputs-table" hidden>
${headers(t, ["job.colOutput", "job.colLocation", "job.colSize", "job.colDuration", "job.colResolution", "job.colCodecs"])}
<tbody></tbody>
</table>
<h3 id="manifest-heading">${t("job.manifest")}</h3>
<p id="manifest-status"></p>
<pre id="job-manifest" class="plan" tabindex="0" aria-labelledby="manifest-heading" dir="ltr" hidden></pre>
</section>
<section aria-labelledby="attempts-heading"><h2 id="attempts-heading">${t("job.attempts")}</h2>
<table id="attempts-table">
${headers(t, ["job.colAttempt", "job.colState", "job.colWorker", "job.colProgress", "job.colFailureCode", "job.colFailureMessage", "job.colStarted", "job.colEnded", "job.colLog"])}
<tbody></tbody>
</table>
</section>
<section aria-labelledby="log-heading"><h2 id="log-heading">${t("job.log")}</h2>
<p id="log-status">${t("job.logAfterEnd")}</p>
<pre id="attempt-log" class="log" tabindex="0" aria-labelledby="log-heading" dir="ltr" hidden></pre>
</section>
<section aria-labelledby="plan-heading"><h2 id="plan-heading">${t("job.plan")}</h2>
<pre id="job-plan" class="plan" tabindex="0" aria-labelledby="plan-heading" dir="ltr"></pre>
</section>
</div>`,
    offered,
    { "job-id": jobId },
  );
}

export function submitView(context: PageContext, offered: Offered): string {
  const t = pageTexts(context);
  return consolePage(
    context,
    "submit",
    context.catalogue.text("submit.title"),
    `<h1>${t("submit.title")}</h1>
<div id="submit-errors" class="errors" role="alert" tabindex="-1"></div>
<form id="submit-form" class="stacked" novalidate>
<div class="row">
<div class="field"><label for="template">${t("submit.template")}</label>
<select id="template" name="template"><option value="">${t("submit.chooseTemplate")}</option></select></div>
<div class="field wide"><label for="project-id">${t("submit.project")}</label>
<select id="project-id" name="projectId" required aria-describedby="project-id-errors"><option value="">${t("submit.loadingProjects")}</option></select>
<ul id="project-id-errors" class="field-errors"></ul></div>
<div class="field"><label for="priority">${t("submit.priority")}</label>
<input id="priority" name="priority" type="number" value="0" min="-1000" max="1000" aria-describedby="priority-errors">
<ul id="priority-errors" class="field-errors"></ul></div>
</div>
<div class="field"><label for="input-uri">${t("submit.input")}</label>
<input id="input-uri" name="inputUri" required autocomplete="off" spellcheck="false" dir="ltr" aria-describedby="input-uri-errors">
<ul id="input-uri-errors" class="field-errors"></ul></div>
<div class="field"><label for="manifest-uri">${t("submit.manifest")}</label>
<input id="manifest-uri" name="manifestUri" autocomplete="off" spellcheck="false" dir="ltr" aria-describedby="manifest-uri-errors">
<ul id="manifest-uri-errors" class="field-errors"></ul></div>
<div class="field"><label for="removed-segments">${t("submit.removedSegments")}</label>
<input id="removed-segments" name="removedSegments" autocomplete="off" spellcheck="false" dir="ltr" placeholder="5000-8000" aria-describedby="removed-segments-errors">
<ul id="removed-segments-errors" class="field-errors"></ul></div>
<div id="outputs"></div>
<ul id="outputs-errors" class="field-errors"></ul>
<p><button type="button" id="add-output" class="secondary">${t("submit.addOutput")}</button></p>
<button type="submit">${t("submit.submit")}</button>
</form>`,
    offered,
    {
      containers: CONTAINERS.join(","),
      "video-codecs": VIDEO_CODECS.join(","),
      "video-presets": VIDEO_PRESETS.join(","),
      "audio-codecs": AUDIO_CODECS.join(","),
    },
  );
}

export function workersView(context: PageContext, offered: Offered): string {
  const t = pageTexts(context);
  return consolePage(
    context,
    "workers",
    context.catalogue.text("workers.title"),
    `<h1>${t("workers.title")}</h1>
<p id="view-status" class="status" role="status"></p>
<p id="action-result" class="status" role="status"></p>
<table id="workers-table">
${headers(t, ["workers.colWorker", "workers.colPool", "workers.colConnectivity", "workers.colCertification", "workers.colCapacity", "workers.colEncoders", "workers.colJobs", "workers.colActions"])}
<tbody></tbody>
</table>
${pager(context, "workers.pages")}`,
    offered,
  );
}

export function enrollmentView(context: PageContext, offered: Offered): string {
  const t = pageTexts(context);
  return consolePage(
    context,
    "enrollment",
    context.catalogue.text("enrollment.title"),
    `<h1>${t("enrollment.title")}</h1>
<p>${t("enrollment.intro")}</p>
<form id="enrollment-form" class="stacked">
<div class="field"><label for="token-label">${t("enrollment.label")}</label>
<input id="token-label" name="label" maxlength="128" autocomplete="off" aria-describedby="token-label-errors">
<ul id="token-label-errors" class="field-errors"></ul></div>
<div class="field"><label for="token-pool">${t("enrollment.pool")}</label>
<select id="token-pool" name="pool">${options(WORKER_POOLS, t("common.anyPool"))}</select></div>
<button type="submit">${t("enrollment.issue")}</button>
</form>
<p id="view-status" class="status" role="status"></p>
<section id="issued-token" aria-labelledby="issued-heading" hidden>
<h2 id="issued-heading">${t("enrollment.newToken")}</h2>
<p class="warning">${t("enrollment.copyNow")}</p>
<label for="token-value">${t("enrollment.token")}</label>
<div class="copy-row"><input id="token-value" readonly spellcheck="false" dir="ltr"><button type="button" id="copy-token">${t("enrollment.copy")}</button></div>
<p id="token-details"></p>
<p id="copy-result" class="status" role="status"></p>
</section>`,
    offered,
  );
}

/** The profile's gender answers (the Manager's open list; self-described takes the person's words). */
const GENDERS = ["female", "male", "non-binary", "prefer-not-to-say", "self-described"] as const;

/**
 * The account's own page, which every signed-in account reaches: its profile and avatar, e-mail
 * and phone (changed through a code), password, sessions, the accounts remembered in this
 * browser, connected apps, logging out and deleting the account, all through `/api/me…` (the
 * console holds the token); then what this console offers it. An account without the operator
 * role lands here instead of pages whose every request would be refused.
 */
export function accountView(context: PageContext, offered: Offered, accountId: string): string {
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
  const genders = GENDERS.map(
    // ICU select keys take no hyphen: the message names the answers with underscores.
    (gender) =>
      `<option value="${gender}">${t("account.profile.genderValue", { gender: gender.replaceAll("-", "_") })}</option>`,
  ).join("");
  const locales = LOCALES.map(
    (locale) => `<option value="${locale}" lang="${locale}">${escapeHtml(LANGUAGE_NAMES[locale])}</option>`,
  ).join("");
  /** A status line of a section, announced when the script writes it, and its sign-in-again button. */
  const status = (id: string) =>
    `<p id="${id}-status" class="status" role="status"></p>
<p class="reauth" data-reauth="${id}" hidden><button type="button" class="secondary">${t("account.reauth.signIn")}</button></p>`;
  return consolePage(
    context,
    "account",
    catalogue.text("account.title"),
    `<h1>${t("account.title")}</h1>
<p>${messageHtml(catalogue, "account.signedInAs", { account: `<code>${escapeHtml(accountId)}</code>` })}</p>
<p id="view-status" class="status" role="status"></p>
<section id="profile" aria-labelledby="profile-heading"><h2 id="profile-heading">${t("account.profile.heading")}</h2>
<div class="avatar-row">
<img id="avatar-image" class="avatar" width="96" height="96" alt="${t("account.profile.avatarAlt")}" hidden>
<p id="no-avatar">${t("account.profile.noAvatar")}</p>
<form id="avatar-form" class="stacked">
<div class="field"><label for="avatar-file">${t("account.profile.avatarFile")}</label>
<input id="avatar-file" name="avatar" type="file" accept="image/png,image/jpeg,image/webp"></div>
<div class="buttons"><button type="submit">${t("account.profile.uploadAvatar")}</button>
<button type="button" id="remove-avatar" class="secondary" hidden>${t("account.profile.removeAvatar")}</button></div>
</form>
</div>
<form id="profile-form" class="stacked" novalidate>
<div class="field"><label for="profile-name">${t("account.profile.name")}</label>
<input id="profile-name" name="name" maxlength="100" autocomplete="name" required aria-describedby="profile-name-errors">
<ul id="profile-name-errors" class="field-errors"></ul></div>
<div class="field"><label for="profile-dateOfBirth">${t("account.profile.dateOfBirth")}</label>
<input id="profile-dateOfBirth" name="dateOfBirth" type="date" autocomplete="bday" aria-describedby="profile-dateOfBirth-errors">
<ul id="profile-dateOfBirth-errors" class="field-errors"></ul></div>
<div class="field"><label for="profile-gender">${t("account.profile.gender")}</label>
<select id="profile-gender" name="gender" aria-describedby="profile-gender-errors"><option value="">${t("account.profile.genderNone")}</option>${genders}</select>
<ul id="profile-gender-errors" class="field-errors"></ul></div>
<div class="field" id="gender-description-field" hidden><label for="profile-genderDescription">${t("account.profile.genderDescription")}</label>
<input id="profile-genderDescription" name="genderDescription" maxlength="50" aria-describedby="profile-genderDescription-errors">
<ul id="profile-genderDescription-errors" class="field-errors"></ul></div>
<div class="field"><label for="profile-locale">${t("account.profile.locale")}</label>
<select id="profile-locale" name="locale" aria-describedby="profile-locale-errors"><option value="">${t("account.profile.localeDefault")}</option>${locales}</select>
<ul id="profile-locale-errors" class="field-errors"></ul></div>
<button type="submit">${t("account.profile.save")}</button>
</form>
${status("profile")}
</section>
<section id="identifiers" aria-labelledby="identifiers-heading"><h2 id="identifiers-heading">${t("account.identifiers.heading")}</h2>
<dl id="identifiers-summary" class="summary"></dl>
<form id="identifiers-form" class="stacked" novalidate>
<div class="field"><label for="identifiers-email">${t("account.identifiers.newEmail")}</label>
<input id="identifiers-email" name="email" type="email" autocomplete="email" dir="ltr" aria-describedby="identifiers-email-errors">
<ul id="identifiers-email-errors" class="field-errors"></ul></div>
<div class="field"><label for="identifiers-phone">${t("account.identifiers.newPhone")}</label>
<input id="identifiers-phone" name="phone" type="tel" autocomplete="tel" dir="ltr" aria-describedby="identifiers-phone-errors">
<ul id="identifiers-phone-errors" class="field-errors"></ul></div>
<button type="submit">${t("account.identifiers.request")}</button>
</form>
<form id="code-form" class="stacked" novalidate hidden>
<p id="code-intro"></p>
<div class="field"><label for="identifiers-code">${t("account.identifiers.codeLabel")}</label>
<input id="identifiers-code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6" dir="ltr" aria-describedby="identifiers-code-errors">
<ul id="identifiers-code-errors" class="field-errors"></ul></div>
<div class="buttons"><button type="submit">${t("account.identifiers.verify")}</button>
<button type="button" id="cancel-change" class="secondary">${t("account.identifiers.cancel")}</button></div>
</form>
${status("identifiers")}
</section>
<section id="password" aria-labelledby="password-heading"><h2 id="password-heading">${t("account.password.heading")}</h2>
<form id="password-form" class="stacked" novalidate>
<div class="field"><label for="password-current">${t("account.password.current")}</label>
<input id="password-current" name="current_password" type="password" autocomplete="current-password" required aria-describedby="password-current-errors">
<ul id="password-current-errors" class="field-errors"></ul></div>
<div class="field"><label for="password-new">${t("account.password.new")}</label>
<input id="password-new" name="new_password" type="password" autocomplete="new-password" required aria-describedby="password-new-errors">
<ul id="password-new-errors" class="field-errors"></ul></div>
<div class="check"><input id="password-revoke" name="revoke_other_sessions" type="checkbox"><label for="password-revoke">${t("account.password.revokeOthers")}</label></div>
<button type="submit">${t("account.password.change")}</button>
</form>
${status("password")}
</section>
${accountMfaSection(t, status)}
<section id="sessions" aria-labelledby="sessions-heading"><h2 id="sessions-heading">${t("account.sessions.heading")}</h2>
<table id="sessions-table">
<caption>${t("account.sessions.caption")}</caption>
${headers(t, ["account.sessions.colBrowser", "account.sessions.colAddress", "account.sessions.colCreated", "account.sessions.colLastUsed", "account.sessions.colApps", "account.sessions.colActions"])}
<tbody></tbody>
</table>
<p><button type="button" id="revoke-others" class="secondary">${t("account.sessions.revokeOthers")}</button></p>
${status("sessions")}
</section>
<section id="remembered" aria-labelledby="remembered-heading"><h2 id="remembered-heading">${t("account.remembered.heading")}</h2>
<p>${t("account.remembered.intro")}</p>
<ul id="remembered-list" class="accounts"></ul>
<p><button type="button" id="another-account" class="secondary">${t("account.remembered.another")}</button></p>
${status("remembered")}
</section>
<section id="apps" aria-labelledby="apps-heading"><h2 id="apps-heading">${t("account.apps.heading")}</h2>
<ul id="apps-list" class="apps"></ul>
${status("apps")}
</section>
${developerAppsSection(context, status)}
<section id="logout" aria-labelledby="logout-heading"><h2 id="logout-heading">${t("account.logout.heading")}</h2>
<p>${t("account.logout.explain")}</p>
<div class="buttons">
<button type="button" data-logout="session" class="secondary">${t("account.logout.session")}</button>
<button type="button" data-logout="account" class="secondary">${t("account.logout.account")}</button>
<button type="button" data-logout="browser" class="secondary">${t("account.logout.browser")}</button>
</div>
${status("logout")}
</section>
<section id="delete" aria-labelledby="delete-heading"><h2 id="delete-heading">${t("account.delete.heading")}</h2>
<p class="warning">${t("account.delete.explain")}</p>
<form id="delete-form" class="stacked" novalidate>
<div class="check"><input id="delete-confirm" name="confirm" type="checkbox" required><label for="delete-confirm">${t("account.delete.understand")}</label></div>
<button type="submit" class="danger">${t("account.delete.submit")}</button>
</form>
${status("delete")}
</section>
<section aria-labelledby="offers-heading"><h2 id="offers-heading">${t("account.offersHeading")}</h2>
<ul id="offered"><li>${operations}</li><li>${clients}</li></ul>
<p>${t("account.rolesNote")}</p>
</section>`,
    offered,
  );
}

const CLIENT_GRANT_TYPES = [
  "authorization_code",
  "refresh_token",
  "client_credentials",
] as const satisfies readonly Schemas["ClientGrantType"][];
const CLIENT_TYPES = ["confidential", "public"] as const satisfies readonly Schemas["ClientType"][];

/**
 * Client management, for an account holding the client-admin role: the clients (searched by
 * name, filtered by type, paged), a form that creates one or edits the chosen one (PUT: the
 * whole definition), its secret's rotation with a grace period, its deletion, and its grants
 * (scopes per protected resource), all through the console's /api/management/clients….
 */
export function clientsView(context: PageContext, offered: Offered): string {
  const t = pageTexts(context);
  const { catalogue } = context;
  const status = (id: string) =>
    `<p id="${id}-status" class="status" role="status"></p>
<p class="reauth" data-reauth="${id}" hidden><button type="button" class="secondary">${t("clients.reauth.signIn")}</button></p>`;
  const field = (name: string, label: string, input: string) =>
    `<div class="field"><label for="client-${name}">${label}</label>
${input}
<ul id="client-${name}-errors" class="field-errors"></ul></div>`;
  const uris = (name: string) =>
    `<textarea id="client-${name}" name="${name}" rows="2" dir="ltr" spellcheck="false" aria-describedby="client-${name}-errors"></textarea>`;
  const types = CLIENT_TYPES.map(
    (type) => `<option value="${type}">${t("clients.typeValue", { type })}</option>`,
  ).join("");
  const grantTypes = CLIENT_GRANT_TYPES.map(
    (grant) =>
      `<div class="check"><input id="client-grant-${grant}" name="grantTypes" type="checkbox" value="${grant}"><label for="client-grant-${grant}" dir="ltr">${grant}</label></div>`,
  ).join("");
  const graces = GRACE_PERIODS.map(
    (grace) => `<option value="${grace.seconds}">${t(grace.label)}</option>`,
  ).join("");
  return consolePage(
    context,
    "clients",
    catalogue.text("clients.title"),
    `<h1>${t("clients.title")}</h1>
<form id="client-filters" class="filters" role="search">
<div class="field"><label for="filter-name">${t("clients.search")}</label><input id="filter-name" name="name" type="search" maxlength="200"></div>
<div class="field"><label for="filter-type">${t("clients.type")}</label><select id="filter-type" name="type"><option value="">${t("clients.anyType")}</option>${types}</select></div>
<button type="submit">${t("clients.apply")}</button>
</form>
<p id="view-status" class="status" role="status"></p>
<table id="clients-table">
<caption>${t("clients.caption")}</caption>
${headers(t, ["clients.colName", "clients.colClientId", "clients.colType", "clients.colGrantTypes", "clients.colCreated", "clients.colActions"])}
<tbody></tbody>
</table>
${pager(context, "clients.pages")}
<p><button type="button" id="new-client" class="secondary">${t("clients.new")}</button></p>
<section id="client-secret" aria-labelledby="client-secret-heading" hidden>
<h2 id="client-secret-heading"></h2>
<p class="warning">${t("clients.copyNow")}</p>
<label for="client-secret-value">${t("clients.secret")}</label>
<div class="copy-row"><input id="client-secret-value" readonly spellcheck="false" dir="ltr"></div>
</section>
<section id="editor" aria-labelledby="editor-heading"><h2 id="editor-heading">${t("clients.createHeading")}</h2>
<form id="client-form" class="stacked" novalidate>
${field("name", t("clients.name"), '<input id="client-name" name="name" maxlength="200" required autocomplete="off" aria-describedby="client-name-errors">')}
${field("type", t("clients.type"), `<select id="client-type" name="type" aria-describedby="client-type-errors">${types}</select>`)}
<fieldset aria-describedby="client-grantTypes-errors"><legend>${t("clients.grantTypes")}</legend>${grantTypes}
<ul id="client-grantTypes-errors" class="field-errors"></ul></fieldset>
${field("redirectUris", t("clients.redirectUris"), uris("redirectUris"))}
${field("postLogoutRedirectUris", t("clients.postLogoutRedirectUris"), uris("postLogoutRedirectUris"))}
${field("backchannelLogoutUri", t("clients.backchannelLogoutUri"), '<input id="client-backchannelLogoutUri" name="backchannelLogoutUri" type="url" dir="ltr" spellcheck="false" aria-describedby="client-backchannelLogoutUri-errors">')}
${field("accessTokenTtlSeconds", t("clients.accessTokenTtl", { min: 30, max: 600 }), '<input id="client-accessTokenTtlSeconds" name="accessTokenTtlSeconds" type="number" min="30" max="600" aria-describedby="client-accessTokenTtlSeconds-errors">')}
<div class="check"><input id="client-firstParty" name="firstParty" type="checkbox"><label for="client-firstParty">${t("clients.firstParty")}</label></div>
<div class="buttons"><button type="submit">${t("clients.create")}</button>
<button type="button" id="cancel-edit" class="secondary" hidden>${t("clients.cancel")}</button></div>
</form>
<div id="client-actions" hidden>
<div class="field"><label for="client-grace">${t("clients.grace")}</label>
<select id="client-grace" name="grace">${graces}</select></div>
<div class="buttons"><button type="button" id="rotate-secret" class="secondary">${t("clients.rotate")}</button>
<button type="button" id="delete-client" class="danger">${t("clients.delete")}</button></div>
</div>
${status("editor")}
</section>
<section id="grants" aria-labelledby="grants-heading" hidden><h2 id="grants-heading">${t("clients.grants.heading")}</h2>
<p>${t("clients.grants.intro")}</p>
<table id="grants-table">
${headers(t, ["clients.grants.colResource", "clients.grants.colScopes", "clients.grants.colGranted", "clients.colActions"])}
<tbody></tbody>
</table>
<form id="grant-form" class="stacked" novalidate>
${field("grant-resource", t("clients.grants.resource"), '<input id="client-grant-resource" name="resource_key" required dir="ltr" spellcheck="false" list="known-resources" aria-describedby="client-grant-resource-errors"><datalist id="known-resources"><option value="account-portal"><option value="admin-console"></datalist>')}
${field("grant-scopes", t("clients.grants.scopes"), '<input id="client-grant-scopes" name="scopes" dir="ltr" spellcheck="false" aria-describedby="client-grant-scopes-errors">')}
<button type="submit">${t("clients.grants.set")}</button>
</form>
${status("grants")}
</section>`,
    offered,
  );
}
