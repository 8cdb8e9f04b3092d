/**
 * The static part of each console view, rendered by the server: headings, forms, empty tables
 * and the regions the page's script fills from `/api/operations/*` and keeps live.
 */
import type { components } from "@tjm/sdk";
import { consolePage, escapeHtml, type Offered } from "../pages/layout.ts";

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

function pager(label: string): string {
  return `<nav class="pager" aria-label="${label}">
<button type="button" data-page="previous">Previous page</button>
<span data-page="position"></span>
<button type="button" data-page="next">Next page</button>
</nav>`;
}

export function jobsView(offered: Offered): string {
  return consolePage(
    "jobs",
    "Jobs",
    `<h1>Jobs</h1>
<form id="job-filters" class="filters">
<div class="field"><label for="filter-state">State</label><select id="filter-state" name="state">${options(JOB_STATES, "Any state")}</select></div>
<div class="field"><label for="filter-pool">Worker pool</label><select id="filter-pool" name="workerPool">${options(WORKER_POOLS, "Any pool")}</select></div>
<button type="submit">Apply filters</button>
</form>
<p id="view-status" class="status" role="status"></p>
<table id="jobs-table">
<caption>Newest first</caption>
<thead><tr><th scope="col">Job</th><th scope="col">State</th><th scope="col">Pool</th><th scope="col">Priority</th><th scope="col">Progress</th><th scope="col">Submitted</th></tr></thead>
<tbody></tbody>
</table>
${pager("Jobs pages")}`,
    offered,
  );
}

export function jobView(offered: Offered, jobId: string): string {
  return consolePage(
    "job",
    "Job",
    `<h1>Job <code>${escapeHtml(jobId)}</code></h1>
<p><a href="/jobs">All jobs</a></p>
<p id="view-status" class="status" role="status"></p>
<div id="job-sections">
<section aria-labelledby="summary-heading"><h2 id="summary-heading">Summary</h2><dl id="job-summary" class="summary"></dl></section>
<section aria-labelledby="progress-heading"><h2 id="progress-heading">Progress</h2><div id="job-progress"></div></section>
<section aria-labelledby="actions-heading"><h2 id="actions-heading">Actions</h2>
<ul id="job-actions" class="actions"></ul>
<p id="action-result" class="status" role="status"></p>
</section>
<section aria-labelledby="outputs-heading"><h2 id="outputs-heading">Outputs</h2>
<p id="outputs-status"></p>
<table id="outputs-table" hidden>
<thead><tr><th scope="col">Output</th><th scope="col">Location</th><th scope="col">Size</th><th scope="col">Duration</th><th scope="col">Resolution</th><th scope="col">Codecs</th></tr></thead>
<tbody></tbody>
</table>
<h3 id="manifest-heading">Manifest</h3>
<p id="manifest-status"></p>
<pre id="job-manifest" class="plan" tabindex="0" aria-labelledby="manifest-heading" hidden></pre>
</section>
<section aria-labelledby="attempts-heading"><h2 id="attempts-heading">Attempts</h2>
<table id="attempts-table">
<thead><tr><th scope="col">Attempt</th><th scope="col">State</th><th scope="col">Worker</th><th scope="col">Progress</th><th scope="col">Failure code</th><th scope="col">Failure message</th><th scope="col">Started</th><th scope="col">Ended</th><th scope="col">Log</th></tr></thead>
<tbody></tbody>
</table>
</section>
<section aria-labelledby="log-heading"><h2 id="log-heading">Log</h2>
<p id="log-status">The Worker uploads an attempt's log when the attempt ends.</p>
<pre id="attempt-log" class="log" tabindex="0" aria-labelledby="log-heading" hidden></pre>
</section>
<section aria-labelledby="plan-heading"><h2 id="plan-heading">Execution plan</h2>
<pre id="job-plan" class="plan" tabindex="0" aria-labelledby="plan-heading"></pre>
</section>
</div>`,
    offered,
    { "job-id": jobId },
  );
}

export function submitView(offered: Offered): string {
  return consolePage(
    "submit",
    "Submit a job",
    `<h1>Submit a job</h1>
<div id="submit-errors" class="errors" role="alert" tabindex="-1"></div>
<form id="submit-form" class="stacked" novalidate>
<div class="row">
<div class="field"><label for="template">Start from a template</label>
<select id="template" name="template"><option value="">Choose a template…</option></select></div>
<div class="field wide"><label for="project-id">Project</label>
<select id="project-id" name="projectId" required aria-describedby="project-id-errors"><option value="">Loading the projects…</option></select>
<ul id="project-id-errors" class="field-errors"></ul></div>
<div class="field"><label for="priority">Priority (−1000 to 1000, higher first)</label>
<input id="priority" name="priority" type="number" value="0" min="-1000" max="1000" aria-describedby="priority-errors">
<ul id="priority-errors" class="field-errors"></ul></div>
</div>
<div class="field"><label for="input-uri">Input (s3://bucket/key)</label>
<input id="input-uri" name="inputUri" required autocomplete="off" spellcheck="false" aria-describedby="input-uri-errors">
<ul id="input-uri-errors" class="field-errors"></ul></div>
<div class="field"><label for="manifest-uri">Manifest (optional, s3://bucket/key)</label>
<input id="manifest-uri" name="manifestUri" autocomplete="off" spellcheck="false" aria-describedby="manifest-uri-errors">
<ul id="manifest-uri-errors" class="field-errors"></ul></div>
<div class="field"><label for="removed-segments">Cut out (optional): start-end in milliseconds, comma-separated</label>
<input id="removed-segments" name="removedSegments" autocomplete="off" spellcheck="false" placeholder="5000-8000" aria-describedby="removed-segments-errors">
<ul id="removed-segments-errors" class="field-errors"></ul></div>
<div id="outputs"></div>
<ul id="outputs-errors" class="field-errors"></ul>
<p><button type="button" id="add-output" class="secondary">Add an output</button></p>
<button type="submit">Submit the job</button>
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

export function workersView(offered: Offered): string {
  return consolePage(
    "workers",
    "Workers",
    `<h1>Workers</h1>
<p id="view-status" class="status" role="status"></p>
<p id="action-result" class="status" role="status"></p>
<table id="workers-table">
<thead><tr><th scope="col">Worker</th><th scope="col">Pool</th><th scope="col">Connectivity</th><th scope="col">Certification</th><th scope="col">Capacity</th><th scope="col">Encoders</th><th scope="col">Current jobs</th><th scope="col">Actions</th></tr></thead>
<tbody></tbody>
</table>
${pager("Workers pages")}`,
    offered,
  );
}

export function enrollmentView(offered: Offered): string {
  return consolePage(
    "enrollment",
    "Enrollment tokens",
    `<h1>Enrollment tokens</h1>
<p>A new Worker host spends one token at its first start. The token is shown once, here, right after it is issued.</p>
<form id="enrollment-form" class="stacked">
<div class="field"><label for="token-label">Label (optional, e.g. the host it is for)</label>
<input id="token-label" name="label" maxlength="128" autocomplete="off" aria-describedby="token-label-errors">
<ul id="token-label-errors" class="field-errors"></ul></div>
<div class="field"><label for="token-pool">Pool the Worker must declare</label>
<select id="token-pool" name="pool">${options(WORKER_POOLS, "Any pool")}</select></div>
<button type="submit">Issue a token</button>
</form>
<p id="view-status" class="status" role="status"></p>
<section id="issued-token" aria-labelledby="issued-heading" hidden>
<h2 id="issued-heading">New token</h2>
<p class="warning">Copy it now: it is not shown again.</p>
<label for="token-value">Enrollment token</label>
<div class="copy-row"><input id="token-value" readonly spellcheck="false"><button type="button" id="copy-token">Copy</button></div>
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
export function accountView(offered: Offered, accountId: string): string {
  const operations = offered.operations
    ? `<li><strong>Operations</strong>: <a href="/jobs">jobs</a>, <a href="/workers">workers</a> and <a href="/enrollment">enrollment tokens</a>.</li>`
    : `<li><strong>Operations</strong> (jobs, workers, enrollment tokens) are not offered: your account does not hold the operator role.</li>`;
  const clients = offered.clientAdministration
    ? `<li><strong>Client administration</strong>: your account holds the client-admin role.</li>`
    : `<li><strong>Client administration</strong> is not offered: your account does not hold the client-admin role.</li>`;
  return consolePage(
    "account",
    "Your account",
    `<h1>Your account</h1>
<p>You are signed in as account <code>${escapeHtml(accountId)}</code>.</p>
<h2>What this console offers you</h2>
<ul id="offered">${operations}${clients}</ul>
<p>An administrator grants roles; sign in again after a role is added.</p>`,
    offered,
  );
}
