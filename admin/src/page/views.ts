/**
 * The static part of each console view, rendered by the server: headings, forms, empty tables
 * and the regions the page's script fills from `/api/operations/*` and keeps live.
 */
import type { components } from "@tjm/sdk";
import { consolePage, escapeHtml } from "../pages/layout.ts";

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

export function jobsView(): string {
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
  );
}

export function jobView(jobId: string): string {
  return consolePage(
    "job",
    "Job",
    `<h1>Job <code>${escapeHtml(jobId)}</code></h1>
<p><a href="/jobs">All jobs</a></p>
<p id="view-status" class="status" role="status"></p>
<section aria-labelledby="summary-heading"><h2 id="summary-heading">Summary</h2><dl id="job-summary" class="summary"></dl></section>
<section aria-labelledby="progress-heading"><h2 id="progress-heading">Progress</h2><div id="job-progress"></div></section>
<section aria-labelledby="actions-heading"><h2 id="actions-heading">Actions</h2>
<ul id="job-actions" class="actions"></ul>
<p id="action-result" class="status" role="status"></p>
</section>
<section aria-labelledby="attempts-heading"><h2 id="attempts-heading">Attempts</h2>
<table id="attempts-table">
<thead><tr><th scope="col">Attempt</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col">Failure code</th><th scope="col">Failure message</th><th scope="col">Started</th></tr></thead>
<tbody></tbody>
</table>
</section>
<section aria-labelledby="plan-heading"><h2 id="plan-heading">Execution plan</h2>
<pre id="job-plan" class="plan" tabindex="0" aria-labelledby="plan-heading"></pre>
</section>`,
    { "job-id": jobId },
  );
}

export function submitView(): string {
  return consolePage(
    "submit",
    "Submit a job",
    `<h1>Submit a job</h1>
<div id="submit-errors" class="errors" role="alert" tabindex="-1"></div>
<form id="submit-form" class="stacked" novalidate>
<div class="field"><label for="project-id">Project id</label>
<input id="project-id" name="projectId" required autocomplete="off" spellcheck="false" aria-describedby="project-id-errors">
<ul id="project-id-errors" class="field-errors"></ul></div>
<div class="field"><label for="priority">Priority (−1000 to 1000, higher first)</label>
<input id="priority" name="priority" type="number" value="0" min="-1000" max="1000" aria-describedby="priority-errors">
<ul id="priority-errors" class="field-errors"></ul></div>
<div class="field"><label for="execution-plan">Execution plan (JSON)</label>
<p id="execution-plan-hint" class="hint">The <code>executionPlan</code> object: input, outputs, transforms.</p>
<textarea id="execution-plan" name="executionPlan" rows="18" required spellcheck="false" aria-describedby="execution-plan-hint execution-plan-errors"></textarea>
<ul id="execution-plan-errors" class="field-errors"></ul></div>
<button type="submit">Submit the job</button>
</form>`,
  );
}

export function workersView(): string {
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
  );
}

export function enrollmentView(): string {
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
  );
}
