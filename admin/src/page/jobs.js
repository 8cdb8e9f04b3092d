/** The jobs list: state and pool filters, pages of 20, live states and progress bars. */
import { errorMessage, getJson } from "./api.js";
import { byId, control, debounce, el, formatPercent, formatTime, progressView, setStatus } from "./dom.js";
import { ids } from "./element-ids.js";
import { t } from "./i18n.js";
import { followEvents, reportedProgress } from "./live.js";
import { Pager } from "./pager.js";

/** @typedef {import("@tjm/sdk").Job} Job */
/** @typedef {import("@tjm/sdk").JobList} JobList */
/** @typedef {import("./live.js").JobProgress} JobProgress */

const PAGE_SIZE = 20;

/** @param {string} jobId */
const progressLabel = (jobId) => t("jobs.progressOf", { job: jobId.slice(0, 8) });

/**
 * The progress bars of the running jobs shown, which job.progress events update in place. The
 * latest event of each job is kept: a refetch keeps showing fps, speed and ETA.
 */
class ProgressBars {
  /** @type {Map<string, JobProgress>} */
  #latest = new Map();
  /** @type {Map<string, HTMLTableCellElement>} */
  #cells = new Map();

  /** Forgets the cells shown: a new page is about to be. */
  clear() {
    this.#cells.clear();
  }

  /**
   * A running job's progress bar; other jobs show the figure the job's page shows (100 % once
   * completed).
   * @param {Job} job
   */
  cell(job) {
    if (job.state !== "RUNNING" && job.state !== "CANCEL_REQUESTED")
      return el("td", { text: formatPercent(job.currentAttempt.progress) });
    const event = this.#latest.get(job.id);
    // An event of an earlier attempt (before a retry) says nothing about this one.
    const live =
      event?.attemptId === job.currentAttemptId ? event : { percent: job.currentAttempt.progress ?? 0 };
    const cell = el("td", {}, progressView(live, progressLabel(job.id)));
    this.#cells.set(job.id, cell);
    return cell;
  }

  /** @param {JobProgress} progress */
  update(progress) {
    this.#latest.set(progress.jobId, progress);
    this.#cells.get(progress.jobId)?.replaceChildren(progressView(progress, progressLabel(progress.jobId)));
  }
}

/**
 * @param {Job} job
 * @param {ProgressBars} bars
 */
function jobRow(job, bars) {
  return el(
    "tr",
    { "data-job-id": job.id },
    el(
      "td",
      {},
      el("a", {
        href: `/jobs/${job.id}`,
        text: job.id.slice(0, 8),
        "aria-label": t("jobs.jobLink", { job: job.id }),
      }),
    ),
    el(
      "td",
      {},
      el("span", { class: `state state-${job.state}`, text: t("common.jobState", { state: job.state }) }),
    ),
    el("td", { text: job.workerPool }),
    el("td", { text: job.priority }),
    bars.cell(job),
    el("td", { text: formatTime(job.createdAt) }),
  );
}

export function start() {
  const form = byId(ids.jobFilters, HTMLFormElement);
  const state = control(form, "state", HTMLSelectElement);
  const workerPool = control(form, "workerPool", HTMLSelectElement);
  const url = new URLSearchParams(location.search);
  state.value = url.get("state") ?? "";
  workerPool.value = url.get("workerPool") ?? "";
  const bars = new ProgressBars();

  const load = async () => {
    const query = new URLSearchParams();
    if (state.value) query.set("state", state.value);
    if (workerPool.value) query.set("workerPool", workerPool.value);
    if (pager.offset > 0) query.set("offset", String(pager.offset));
    history.replaceState(null, "", query.size > 0 ? `?${query}` : location.pathname);
    query.set("limit", String(PAGE_SIZE));
    query.set("offset", String(pager.offset));
    try {
      /** @type {JobList} */
      const list = await getJson(`/api/operations/jobs?${query}`);
      bars.clear();
      pager.show(
        list.items.map((job) => jobRow(job, bars)),
        list.total,
      );
      setStatus(ids.viewStatus, "");
    } catch (error) {
      setStatus(ids.viewStatus, t("jobs.loadFailed", { error: errorMessage(error) }));
    }
  };
  const pager = new Pager({
    tableId: ids.jobsTable,
    pageSize: PAGE_SIZE,
    columns: 6,
    emptyText: t("jobs.empty"),
    positionText: (rows) => t("jobs.position", rows),
    load,
    offset: Number(url.get("offset")) || 0,
  });
  const reload = debounce(load, 250);

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    pager.restart();
  });
  form.addEventListener("change", () => pager.restart());

  void load();
  followEvents({
    query: "?kinds=job.created,job.updated,job.progress",
    refetch: reload,
    onEvent: (event) => {
      const progress = reportedProgress(event);
      if (progress === undefined) reload();
      else bars.update(progress);
    },
  });
}
