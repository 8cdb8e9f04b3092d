/**
 * The static part of each console view, rendered by the server: headings, forms, empty tables
 * and the regions the page's script fills from `/api/operations/*` and keeps live, every text
 * from the page's catalogue.
 */
import type { components } from "@tjm/sdk";
import {
  consolePage,
  escapeHtml,
  messageHtml,
  type Offered,
  type PageContext,
  pageTexts,
} from "../pages/layout.ts";
import { GRACE_PERIODS } from "./account-developer-apps-view.ts";
import { errorsId, ids, sections } from "./element-ids.js";
import { field, headers, options, pager, sectionOpening, sectionStatus, type Texts } from "./view-parts.ts";

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

export function jobsView(context: PageContext, offered: Offered): string {
  const t = pageTexts(context);
  return consolePage(
    context,
    "jobs",
    context.catalogue.text("jobs.title"),
    `<h1>${t("jobs.title")}</h1>
<form id="${ids.jobFilters}" class="filters">
<div class="field"><label for="filter-state">${t("jobs.state")}</label><select id="filter-state" name="state">${options(JOB_STATES, t("common.anyState"))}</select></div>
<div class="field"><label for="filter-pool">${t("jobs.pool")}</label><select id="filter-pool" name="workerPool">${options(WORKER_POOLS, t("common.anyPool"))}</select></div>
<button type="submit">${t("jobs.apply")}</button>
</form>
<p id="${ids.viewStatus}" class="status" role="status"></p>
<table id="${ids.jobsTable}">
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
<p id="${ids.viewStatus}" class="status" role="status"></p>
<div id="${ids.jobSections}">
<section aria-labelledby="summary-heading"><h2 id="summary-heading">${t("job.summary")}</h2><dl id="${ids.jobSummary}" class="summary"></dl></section>
<section aria-labelledby="progress-heading"><h2 id="progress-heading">${t("job.progress")}</h2><div id="${ids.jobProgress}"></div></section>
<section aria-labelledby="actions-heading"><h2 id="actions-heading">${t("job.actions")}</h2>
<ul id="${ids.jobActions}" class="actions"></ul>
<p id="${ids.actionResult}" class="status" role="status"></p>
</section>
<section aria-labelledby="outputs-heading"><h2 id="outputs-heading">${t("job.outputs")}</h2>
<p id="${ids.outputsStatus}"></p>
<table id="${ids.outputsTable}" hidden>
${headers(t, ["job.colOutput", "job.colLocation", "job.colSize", "job.colDuration", "job.colResolution", "job.colCodecs"])}
<tbody></tbody>
</table>
<h3 id="manifest-heading">${t("job.manifest")}</h3>
<p id="${ids.manifestStatus}"></p>
<pre id="${ids.jobManifest}" class="plan" tabindex="0" aria-labelledby="manifest-heading" dir="ltr" hidden></pre>
</section>
<section aria-labelledby="attempts-heading"><h2 id="attempts-heading">${t("job.attempts")}</h2>
<table id="${ids.attemptsTable}">
${headers(t, ["job.colAttempt", "job.colState", "job.colWorker", "job.colProgress", "job.colFailureCode", "job.colFailureMessage", "job.colStarted", "job.colEnded", "job.colLog"])}
<tbody></tbody>
</table>
</section>
<section aria-labelledby="log-heading"><h2 id="log-heading">${t("job.log")}</h2>
<p id="${ids.logStatus}">${t("job.logAfterEnd")}</p>
<pre id="${ids.attemptLog}" class="log" tabindex="0" aria-labelledby="log-heading" dir="ltr" hidden></pre>
</section>
<section aria-labelledby="plan-heading"><h2 id="plan-heading">${t("job.plan")}</h2>
<pre id="${ids.jobPlan}" class="plan" tabindex="0" aria-labelledby="plan-heading" dir="ltr"></pre>
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
<div id="${ids.submitErrors}" class="errors" role="alert" tabindex="-1"></div>
<form id="${ids.submitForm}" class="stacked" novalidate>
<div class="row">
<div class="field"><label for="${ids.template}">${t("submit.template")}</label>
<select id="${ids.template}" name="template"><option value="">${t("submit.chooseTemplate")}</option></select></div>
${field(ids.projectId, t("submit.project"), `<select id="${ids.projectId}" name="projectId" required aria-describedby="${errorsId(ids.projectId)}"><option value="">${t("submit.loadingProjects")}</option></select>`, "field wide")}
${field(ids.priority, t("submit.priority"), `<input id="${ids.priority}" name="priority" type="number" value="0" min="-1000" max="1000" aria-describedby="${errorsId(ids.priority)}">`)}
</div>
${field(ids.inputUri, t("submit.input"), `<input id="${ids.inputUri}" name="inputUri" required autocomplete="off" spellcheck="false" dir="ltr" aria-describedby="${errorsId(ids.inputUri)}">`)}
${field(ids.manifestUri, t("submit.manifest"), `<input id="${ids.manifestUri}" name="manifestUri" autocomplete="off" spellcheck="false" dir="ltr" aria-describedby="${errorsId(ids.manifestUri)}">`)}
${field(ids.removedSegments, t("submit.removedSegments"), `<input id="${ids.removedSegments}" name="removedSegments" autocomplete="off" spellcheck="false" dir="ltr" placeholder="5000-8000" aria-describedby="${errorsId(ids.removedSegments)}">`)}
<div id="${ids.outputs}"></div>
<ul id="${errorsId(ids.outputs)}" class="field-errors"></ul>
<p><button type="button" id="${ids.addOutput}" class="secondary">${t("submit.addOutput")}</button></p>
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
<p id="${ids.viewStatus}" class="status" role="status"></p>
<p id="${ids.actionResult}" class="status" role="status"></p>
<table id="${ids.workersTable}">
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
<form id="${ids.enrollmentForm}" class="stacked">
${field(ids.tokenLabel, t("enrollment.label"), `<input id="${ids.tokenLabel}" name="label" maxlength="128" autocomplete="off" aria-describedby="${errorsId(ids.tokenLabel)}">`)}
<div class="field"><label for="token-pool">${t("enrollment.pool")}</label>
<select id="token-pool" name="pool">${options(WORKER_POOLS, t("common.anyPool"))}</select></div>
<button type="submit">${t("enrollment.issue")}</button>
</form>
<p id="${ids.viewStatus}" class="status" role="status"></p>
<section id="${ids.issuedToken}" aria-labelledby="issued-heading" hidden>
<h2 id="issued-heading">${t("enrollment.newToken")}</h2>
<p class="warning">${t("enrollment.copyNow")}</p>
<label for="${ids.tokenValue}">${t("enrollment.token")}</label>
<div class="copy-row"><input id="${ids.tokenValue}" readonly spellcheck="false" dir="ltr"><button type="button" id="${ids.copyToken}">${t("enrollment.copy")}</button></div>
<p id="${ids.tokenDetails}"></p>
<p id="${ids.copyResult}" class="status" role="status"></p>
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

/** A field of the client editor's forms: `name` is its control's name, `client-<name>` its id. */
const clientField = (name: string, label: string, control: (id: string, describedBy: string) => string) =>
  field(`client-${name}`, label, control(`client-${name}`, errorsId(`client-${name}`)));

/** A client's list of URIs, one a line, named `name`. */
const clientUris = (name: string) => (id: string, describedBy: string) =>
  `<textarea id="${id}" name="${name}" rows="2" dir="ltr" spellcheck="false" aria-describedby="${describedBy}"></textarea>`;

/** The client editor: a client's definition, then (once it exists) its secret's rotation and deletion. */
function clientEditorSection(t: Texts, types: string): string {
  const grantTypes = CLIENT_GRANT_TYPES.map(
    (grant) =>
      `<div class="check"><input id="client-grant-${grant}" name="grantTypes" type="checkbox" value="${grant}"><label for="client-grant-${grant}" dir="ltr">${grant}</label></div>`,
  ).join("");
  const graces = GRACE_PERIODS.map(
    (grace) => `<option value="${grace.seconds}">${t(grace.label)}</option>`,
  ).join("");
  return `${sectionOpening(sections.editor, t("clients.createHeading"))}
<form id="${ids.clientForm}" class="stacked" novalidate>
${clientField("name", t("clients.name"), (id, describedBy) => `<input id="${id}" name="name" maxlength="200" required autocomplete="off" aria-describedby="${describedBy}">`)}
${clientField("type", t("clients.type"), (id, describedBy) => `<select id="${id}" name="type" aria-describedby="${describedBy}">${types}</select>`)}
<fieldset aria-describedby="${errorsId("client-grantTypes")}"><legend>${t("clients.grantTypes")}</legend>${grantTypes}
<ul id="${errorsId("client-grantTypes")}" class="field-errors"></ul></fieldset>
${clientField("redirectUris", t("clients.redirectUris"), clientUris("redirectUris"))}
${clientField("postLogoutRedirectUris", t("clients.postLogoutRedirectUris"), clientUris("postLogoutRedirectUris"))}
${clientField("backchannelLogoutUri", t("clients.backchannelLogoutUri"), (id, describedBy) => `<input id="${id}" name="backchannelLogoutUri" type="url" dir="ltr" spellcheck="false" aria-describedby="${describedBy}">`)}
${clientField("accessTokenTtlSeconds", t("clients.accessTokenTtl", { min: 30, max: 600 }), (id, describedBy) => `<input id="${id}" name="accessTokenTtlSeconds" type="number" min="30" max="600" aria-describedby="${describedBy}">`)}
<div class="check"><input id="client-firstParty" name="firstParty" type="checkbox"><label for="client-firstParty">${t("clients.firstParty")}</label></div>
<div class="buttons"><button type="submit">${t("clients.create")}</button>
<button type="button" id="${ids.cancelEdit}" class="secondary" hidden>${t("clients.cancel")}</button></div>
</form>
<div id="${ids.clientActions}" hidden>
<div class="field"><label for="${ids.clientGrace}">${t("clients.grace")}</label>
<select id="${ids.clientGrace}" name="grace">${graces}</select></div>
<div class="buttons"><button type="button" id="${ids.rotateSecret}" class="secondary">${t("clients.rotate")}</button>
<button type="button" id="${ids.deleteClient}" class="danger">${t("clients.delete")}</button></div>
</div>
${sectionStatus(sections.editor, t("clients.reauth.signIn"))}
</section>`;
}

/** The grants of the client being edited: its scopes per protected resource. */
function clientGrantsSection(t: Texts): string {
  return `${sectionOpening(sections.grants, t("clients.grants.heading"), " hidden")}
<p>${t("clients.grants.intro")}</p>
<table id="${ids.grantsTable}">
${headers(t, ["clients.grants.colResource", "clients.grants.colScopes", "clients.grants.colGranted", "clients.colActions"])}
<tbody></tbody>
</table>
<form id="${ids.grantForm}" class="stacked" novalidate>
${clientField("grant-resource", t("clients.grants.resource"), (id, describedBy) => `<input id="${id}" name="resource_key" required dir="ltr" spellcheck="false" list="known-resources" aria-describedby="${describedBy}"><datalist id="known-resources"><option value="account-portal"><option value="admin-console"></datalist>`)}
${clientField("grant-scopes", t("clients.grants.scopes"), (id, describedBy) => `<input id="${id}" name="scopes" dir="ltr" spellcheck="false" aria-describedby="${describedBy}">`)}
<button type="submit">${t("clients.grants.set")}</button>
</form>
${sectionStatus(sections.grants, t("clients.reauth.signIn"))}
</section>`;
}

/**
 * Client management, for an account holding the client-admin role: the clients (searched by
 * name, filtered by type, paged), a form that creates one or edits the chosen one (PUT: the
 * whole definition), its secret's rotation with a grace period, its deletion, and its grants
 * (scopes per protected resource), all through the console's /api/management/clients….
 */
export function clientsView(context: PageContext, offered: Offered): string {
  const t = pageTexts(context);
  const types = CLIENT_TYPES.map(
    (type) => `<option value="${type}">${t("clients.typeValue", { type })}</option>`,
  ).join("");
  return consolePage(
    context,
    "clients",
    context.catalogue.text("clients.title"),
    `<h1>${t("clients.title")}</h1>
<form id="${ids.clientFilters}" class="filters" role="search">
<div class="field"><label for="filter-name">${t("clients.search")}</label><input id="filter-name" name="name" type="search" maxlength="200"></div>
<div class="field"><label for="filter-type">${t("clients.type")}</label><select id="filter-type" name="type"><option value="">${t("clients.anyType")}</option>${types}</select></div>
<button type="submit">${t("clients.apply")}</button>
</form>
<p id="${ids.viewStatus}" class="status" role="status"></p>
<table id="${ids.clientsTable}">
<caption>${t("clients.caption")}</caption>
${headers(t, ["clients.colName", "clients.colClientId", "clients.colType", "clients.colGrantTypes", "clients.colCreated", "clients.colActions"])}
<tbody></tbody>
</table>
${pager(context, "clients.pages")}
<p><button type="button" id="${ids.newClient}" class="secondary">${t("clients.new")}</button></p>
<section id="${ids.clientSecret}" aria-labelledby="${ids.clientSecretHeading}" hidden>
<h2 id="${ids.clientSecretHeading}"></h2>
<p class="warning">${t("clients.copyNow")}</p>
<label for="${ids.clientSecretValue}">${t("clients.secret")}</label>
<div class="copy-row"><input id="${ids.clientSecretValue}" readonly spellcheck="false" dir="ltr"></div>
</section>
${clientEditorSection(t, types)}
${clientGrantsSection(t)}`,
    offered,
  );
}
