/**
 * What the job's page shows of a job as loaded, built from it alone: the summary's rows, an
 * output's row, an attempt's row. job-detail.js puts them in the view and keeps them live.
 */
import { el, formatBytes, formatPercent, formatSeconds, formatTime } from "./dom.js";
import { t } from "./i18n.js";

/** @typedef {import("@tjm/sdk").JobDetail} JobDetail */
/** @typedef {JobDetail["attempts"][number]} Attempt */
/** @typedef {JobDetail["outputs"][number]} JobOutput */

/** @type {Set<JobDetail["state"]>} */
const ENDED = new Set(["CANCELLED", "FAILED"]);

/**
 * The summary's terms and values: state, progress (`percent`), why the current `attempt` waits
 * or failed, the job's pool, priority, project and capabilities, and its times.
 * @param {JobDetail} job
 * @param {Attempt | undefined} attempt
 * @param {number | null} percent
 * @returns {[string, Node | string][]}
 */
export function summaryRows(job, attempt, percent) {
  /** @type {[string, Node | string][]} */
  const rows = [
    [
      t("job.fieldState"),
      el("span", {
        class: `state state-${job.state}`,
        "data-field": "state",
        text: t("common.jobState", { state: job.state }),
      }),
    ],
    [t("job.fieldProgress"), el("span", { "data-field": "progress", text: formatPercent(percent) })],
  ];
  if (attempt?.waitingForInput) {
    rows.push([
      t("job.fieldWaitingForInput"),
      el("span", {
        "data-field": "waiting-for-input",
        text: t("job.waitingForInput", {
          since: formatTime(attempt.waitingForInput.since),
          error: attempt.waitingForInput.lastError,
        }),
      }),
    ]);
  }
  if (job.state === "FAILED" && attempt?.failureCode) {
    rows.push([
      t("job.fieldFailure"),
      el(
        "span",
        { "data-field": "failure" },
        el("code", { text: attempt.failureCode }),
        ` ${attempt.failureMessage ?? ""}`,
      ),
    ]);
  }
  rows.push(
    [t("job.fieldPool"), job.workerPool],
    [t("job.fieldPriority"), String(job.priority)],
    [t("job.fieldProject"), job.projectId],
    [t("job.fieldCapabilities"), job.requirements.requiredCapabilities.join(", ") || t("job.noCapabilities")],
    [t("job.fieldSubmitted"), formatTime(job.createdAt)],
    [t("job.fieldStarted"), job.startedAt ? formatTime(job.startedAt) : t("job.notStarted")],
  );
  if (job.state === "COMPLETED") rows.push([t("job.fieldCompleted"), formatTime(job.completedAt)]);
  else if (ENDED.has(job.state)) {
    rows.push([
      job.state === "FAILED" ? t("job.fieldFailed") : t("job.fieldCancelled"),
      formatTime(attempt?.endedAt ?? job.updatedAt),
    ]);
  }
  return rows;
}

/** @param {JobOutput} output */
function resolution(output) {
  if (output.widthPx === null || output.heightPx === null) {
    return output.codecs.some((codec) => ["h264", "hevc", "av1", "vp9"].includes(codec))
      ? t("job.notReported")
      : t("job.audioOnly");
  }
  return `${output.widthPx}×${output.heightPx}`;
}

/** @param {JobOutput} output */
export function outputRow(output) {
  return el(
    "tr",
    { "data-output-id": output.id },
    el("th", { scope: "row", text: output.id }),
    el("td", {}, el("code", { text: output.uri })),
    el("td", { text: formatBytes(output.bytes) }),
    el("td", { text: formatSeconds(output.durationMs / 1000) }),
    el("td", { text: resolution(output) }),
    el("td", { text: output.codecs.join(", ") }),
  );
}

/**
 * An attempt's row: `percent` its progress as the page knows it, `worker` the cell naming its
 * Worker (none until dispatched), `showLog` what its log button does.
 * @param {Attempt} attempt
 * @param {{ percent: number | null, worker: Node | undefined, showLog: () => void }} shown
 */
export function attemptRow(attempt, { percent, worker, showLog }) {
  const logButton = attempt.logsUri
    ? el("button", {
        type: "button",
        class: "secondary",
        "data-log-attempt": attempt.attemptNumber,
        "aria-label": t("job.showLogOf", { attempt: attempt.attemptNumber }),
        text: t("job.showLog"),
        onclick: showLog,
      })
    : t("job.logNotUploaded");
  return el(
    "tr",
    { "data-attempt-id": attempt.id },
    el("td", { text: attempt.attemptNumber }),
    el("td", { text: t("common.attemptState", { state: attempt.state }) }),
    el("td", {}, worker ?? t("job.notDispatched")),
    el("td", { "data-attempt-progress": attempt.id, text: formatPercent(percent) }),
    el("td", {}, attempt.failureCode ? el("code", { text: attempt.failureCode }) : t("common.none")),
    el("td", { text: attempt.failureMessage ?? t("common.none") }),
    el("td", { text: attempt.startedAt ? formatTime(attempt.startedAt) : t("job.didNotStart") }),
    el("td", { text: formatTime(attempt.endedAt) }),
    el("td", {}, logButton),
  );
}
