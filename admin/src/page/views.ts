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
import type { ConsoleKey } from "../pages/messages.ts";

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

/**
 * What every signed-in account sees: who it is and what this console offers it. An account
 * without the operator role lands here instead of pages whose every request would be refused.
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
    { clients: `<strong>${t("account.clients")}</strong>` },
  );
  return consolePage(
    context,
    "account",
    catalogue.text("account.title"),
    `<h1>${t("account.title")}</h1>
<p>${messageHtml(catalogue, "account.signedInAs", { account: `<code>${escapeHtml(accountId)}</code>` })}</p>
<h2>${t("account.offersHeading")}</h2>
<ul id="offered"><li>${operations}</li><li>${clients}</li></ul>
<p>${t("account.rolesNote")}</p>`,
    offered,
  );
}
