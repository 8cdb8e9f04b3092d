/**
 * One job: its summary (with the failure when it failed, its end when it ended), live
 * progress, the outputs and the manifest once it completed, every attempt with the Worker
 * that ran it and its times, the tail of an attempt's log, the plan, and the cancel / retry /
 * resume-uploads actions, each disabled with the reason when the state does not allow it
 * (the same rules the Manager applies; it still has the last word). Cancel asks first.
 */
import { ApiError, errorMessage, getJson, postJson } from "./api.js";
import {
  byId,
  debounce,
  el,
  formatBytes,
  formatPercent,
  progressView,
  setStatus,
  tableBody,
  viewData,
} from "./dom.js";
import { ids } from "./element-ids.js";
import { t } from "./i18n.js";
import { attemptRow, outputRow, summaryRows } from "./job-detail-parts.js";
import { followEvents, reportedProgress } from "./live.js";

/** @typedef {import("@tjm/sdk").JobDetail} JobDetail */
/** @typedef {JobDetail["attempts"][number]} Attempt */
/** @typedef {import("@tjm/sdk").components["schemas"]["AttemptLog"]} AttemptLog */
/** @typedef {import("@tjm/sdk").components["schemas"]["Worker"]} Worker */
/** @typedef {import("./live.js").JobProgress} JobProgress */

/** @param {JobDetail["state"]} state */
function cancelRefusal(state) {
  switch (state) {
    case "CANCEL_REQUESTED":
      return t("job.cancelBeingCancelled");
    case "CANCELLED":
      return t("job.cancelCancelled");
    case "COMPLETED":
    case "FAILED":
      return t("job.cancelEnded");
    default:
      return undefined;
  }
}

/**
 * An operator's action on the job; `refusal` says why its state does not allow it, `question`
 * is asked first.
 * @typedef {object} JobAction
 * @property {"cancel" | "retry" | "resume-uploads"} name
 * @property {import("./i18n.js").MessageKey} label
 * @property {(job: JobDetail) => string} [question]
 * @property {import("./i18n.js").MessageKey} done
 * @property {(job: JobDetail) => string | undefined} refusal
 */

/** @type {JobAction[]} */
const ACTIONS = [
  {
    name: "cancel",
    label: "job.cancel",
    question: (job) => t("job.cancelQuestion", { job: job.id }),
    done: "job.cancelDone",
    refusal: (job) => cancelRefusal(job.state),
  },
  {
    name: "retry",
    label: "job.retry",
    done: "job.retryDone",
    refusal: (job) => (job.state === "FAILED" ? undefined : t("job.retryRefused")),
  },
  {
    name: "resume-uploads",
    label: "job.resume",
    done: "job.resumeDone",
    refusal: (job) => (job.state === "WAITING_FOR_STORAGE" ? undefined : t("job.resumeRefused")),
  },
];

/** @type {Set<JobDetail["state"]>} */
const SHOWS_PROGRESS = new Set(["RUNNING", "CANCEL_REQUESTED", "COMPLETED"]);

/** The job's page: the job as last loaded and its latest progress event, rendered into the view. */
class JobPage {
  #jobId;
  /** @type {JobDetail | undefined} */
  #job;
  /** @type {JobProgress | undefined} */
  #live;
  /**
   * The attempt whose log was last asked for.
   * @type {string | undefined}
   */
  #logShown;
  /**
   * Worker names by id, asked once each; a Worker no longer listed keeps its id.
   * @type {Map<string, string | undefined>}
   */
  #workerNames = new Map();
  /** The job is gone (404): the page says so once and asks no more. */
  #missing = false;
  #summary = byId(ids.jobSummary, HTMLElement);
  #progress = byId(ids.jobProgress, HTMLElement);
  #attempts = tableBody(ids.attemptsTable);

  /** @param {string} jobId */
  constructor(jobId) {
    this.#jobId = jobId;
  }

  async load() {
    if (this.#missing) return;
    try {
      this.#job = await getJson(`/api/operations/jobs/${this.#jobId}`);
      setStatus(ids.viewStatus, "");
      this.#render();
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        // One message, not a page of empty sections.
        this.#missing = true;
        byId(ids.jobSections, HTMLElement).hidden = true;
        setStatus(ids.viewStatus, t("job.missing", { job: this.#jobId }));
        return;
      }
      setStatus(ids.viewStatus, t("job.loadFailed", { error: errorMessage(error) }));
    }
  }

  /** @param {JobProgress} progress */
  showProgress(progress) {
    this.#live = progress;
    if (this.#job) this.#renderProgress(this.#job);
  }

  #render() {
    const job = this.#job;
    if (job === undefined) return;
    const attempt = job.attempts.find((candidate) => candidate.id === job.currentAttemptId);
    this.#summary.replaceChildren(
      ...summaryRows(job, attempt, this.#currentPercent(job)).flatMap(([term, value]) => [
        el("dt", { text: term }),
        el("dd", {}, value),
      ]),
    );
    this.#renderProgress(job);
    this.#renderActions(job);
    this.#renderOutputs(job);
    this.#renderAttempts(job);
    const plan = byId(ids.jobPlan, HTMLElement);
    const planText = JSON.stringify(job.executionPlan, null, 2);
    if (plan.textContent !== planText) plan.textContent = planText;
  }

  /**
   * The current attempt's percent: its latest progress event, else what the Manager answered.
   * @param {JobDetail} job
   */
  #currentPercent(job) {
    return this.#live?.attemptId === job.currentAttemptId && job.state !== "COMPLETED"
      ? this.#live.percent
      : job.currentAttempt.progress;
  }

  /** @param {JobDetail} job */
  #renderProgress(job) {
    const percent = formatPercent(this.#currentPercent(job));
    const cell = this.#attempts.querySelector(`[data-attempt-progress="${job.currentAttemptId}"]`);
    if (cell) cell.textContent = percent;
    const summaryCell = this.#summary.querySelector('[data-field="progress"]');
    if (summaryCell) summaryCell.textContent = percent;
    if (!SHOWS_PROGRESS.has(job.state)) {
      this.#progress.replaceChildren(
        el("p", { text: t("job.notRunning", { state: t("common.jobState", { state: job.state }) }) }),
      );
      return;
    }
    // A retry's new attempt starts from nothing, whatever the previous one reported.
    const figures = this.#live?.attemptId === job.currentAttemptId ? this.#live : {};
    const shownPercent = this.#currentPercent(job) ?? 0;
    // Once completed, the encoding figures belong to the past: only the percent stays.
    const shown =
      job.state === "COMPLETED" ? { percent: shownPercent } : { ...figures, percent: shownPercent };
    this.#progress.replaceChildren(progressView(shown, t("job.progressOfAttempt")));
  }

  /** @param {JobDetail} job */
  #renderActions(job) {
    byId(ids.jobActions, HTMLElement).replaceChildren(
      ...ACTIONS.map((action) => {
        const refusal = action.refusal(job);
        const reasonId = `reason-${action.name}`;
        const button = el("button", {
          type: "button",
          "data-action": action.name,
          class: action.name === "cancel" ? "danger" : undefined,
          disabled: refusal !== undefined,
          "aria-describedby": refusal === undefined ? undefined : reasonId,
          text: t(action.label),
        });
        button.addEventListener("click", () => this.#act(job, action, button));
        return el(
          "li",
          {},
          button,
          refusal === undefined ? null : el("span", { id: reasonId, class: "reason", text: refusal }),
        );
      }),
    );
  }

  /**
   * @param {JobDetail} job
   * @param {JobAction} action
   * @param {HTMLButtonElement} button
   */
  async #act(job, action, button) {
    if (action.question && !window.confirm(action.question(job))) return;
    button.disabled = true;
    setStatus(ids.actionResult, t("job.acting", { action: t(action.label) }));
    try {
      await postJson(`/api/operations/jobs/${this.#jobId}/${action.name}`);
      setStatus(ids.actionResult, t(action.done));
    } catch (error) {
      setStatus(
        ids.actionResult,
        t("job.actionRefused", { action: t(action.label), error: errorMessage(error) }),
      );
    }
    await this.load();
  }

  /** @param {JobDetail} job */
  #renderOutputs(job) {
    const outputsTable = byId(ids.outputsTable, HTMLTableElement);
    outputsTable.hidden = job.outputs.length === 0;
    setStatus(
      ids.outputsStatus,
      job.outputs.length > 0 ? "" : job.state === "COMPLETED" ? t("job.noOutputs") : t("job.outputsLater"),
    );
    tableBody(ids.outputsTable).replaceChildren(...job.outputs.map(outputRow));
    const manifest = byId(ids.jobManifest, HTMLElement);
    const text = job.manifest ? JSON.stringify(job.manifest, null, 2) : "";
    manifest.hidden = job.manifest === null;
    if (manifest.textContent !== text) manifest.textContent = text;
    const { manifestUri } = job.executionPlan;
    setStatus(
      ids.manifestStatus,
      job.manifest
        ? t("job.manifestWritten", { uri: manifestUri })
        : manifestUri
          ? t("job.manifestLater", { uri: manifestUri })
          : t("job.noManifest"),
    );
  }

  /** @param {JobDetail} job */
  #renderAttempts(job) {
    this.#attempts.replaceChildren(
      ...job.attempts.map((attempt) =>
        attemptRow(attempt, {
          percent: attempt.id === job.currentAttemptId ? this.#currentPercent(job) : attempt.progress,
          worker: attempt.workerId ? this.#workerCell(attempt.workerId) : undefined,
          showLog: () => this.#showLog(attempt),
        }),
      ),
    );
    // The newest attempt with a log is shown without asking: that is where a failure is explained.
    const latest = job.attempts.findLast((attempt) => attempt.logsUri);
    if (latest && this.#logShown !== latest.id) void this.#showLog(latest);
  }

  /** @param {string} workerId */
  #workerCell(workerId) {
    if (!this.#workerNames.has(workerId)) {
      this.#workerNames.set(workerId, undefined);
      void getJson(`/api/operations/workers/${workerId}`).then(
        /** @param {Worker} worker */
        (worker) => {
          this.#workerNames.set(workerId, worker.name);
          if (this.#job) this.#renderAttempts(this.#job);
        },
        () => {},
      );
    }
    const name = this.#workerNames.get(workerId);
    return el(
      "span",
      { "data-worker-id": workerId, title: workerId },
      name === undefined ? "" : `${name} `,
      el("code", { text: workerId.slice(0, 8) }),
    );
  }

  /** @param {Attempt} attempt */
  async #showLog(attempt) {
    // Asked once per attempt on its own; a failure is not retried on every refetch.
    this.#logShown = attempt.id;
    const log = byId(ids.attemptLog, HTMLElement);
    setStatus(ids.logStatus, t("job.logLoading", { attempt: attempt.attemptNumber }));
    try {
      /** @type {AttemptLog} */
      const tail = await getJson(`/api/operations/jobs/${this.#jobId}/attempts/${attempt.id}/log`);
      log.textContent = tail.text;
      log.hidden = false;
      const where = {
        attempt: attempt.attemptNumber,
        total: formatBytes(tail.totalBytes),
        uri: tail.logsUri,
      };
      setStatus(
        ids.logStatus,
        tail.truncated
          ? t("job.logPart", { ...where, shown: formatBytes(new TextEncoder().encode(tail.text).length) })
          : t("job.logWhole", where),
      );
    } catch (error) {
      log.hidden = true;
      setStatus(
        ids.logStatus,
        t("job.logMissing", { attempt: attempt.attemptNumber, error: errorMessage(error) }),
      );
    }
  }
}

/** @param {DOMStringMap} data */
export function start(data) {
  const jobId = viewData(data, "jobId");
  const page = new JobPage(jobId);
  const reload = debounce(() => page.load(), 250);
  void page.load();
  followEvents({
    query: `?jobId=${encodeURIComponent(jobId)}`,
    refetch: reload,
    onEvent: (event) => {
      const progress = reportedProgress(event);
      if (progress === undefined) reload();
      else page.showProgress(progress);
    },
  });
}
