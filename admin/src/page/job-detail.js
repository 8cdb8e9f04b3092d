/**
 * One job: its summary (with the failure when it failed, its end when it ended), live
 * progress, the outputs and the manifest once it completed, every attempt with the Worker
 * that ran it and its times, the tail of an attempt's log, the plan, and the cancel / retry /
 * resume-uploads actions, each disabled with the reason when the state does not allow it
 * (the same rules the Manager applies; it still has the last word). Cancel asks first.
 */
import { ApiError, errorMessage, getJson, postJson } from "./api.js";
import {
  debounce,
  el,
  formatBytes,
  formatPercent,
  formatSeconds,
  formatTime,
  progressView,
  setStatus,
} from "./dom.js";
import { t } from "./i18n.js";
import { followEvents } from "./live.js";

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

const SHOWS_PROGRESS = new Set(["RUNNING", "CANCEL_REQUESTED", "COMPLETED"]);
const ENDED = new Set(["CANCELLED", "FAILED"]);

function resolution(output) {
  if (output.widthPx === null || output.heightPx === null) {
    return output.codecs.some((codec) => ["h264", "hevc", "av1", "vp9"].includes(codec))
      ? t("job.notReported")
      : t("job.audioOnly");
  }
  return `${output.widthPx}×${output.heightPx}`;
}

export function start({ jobId }) {
  const sections = document.getElementById("job-sections");
  const summary = document.getElementById("job-summary");
  const progress = document.getElementById("job-progress");
  const actions = document.getElementById("job-actions");
  const attempts = document.querySelector("#attempts-table tbody");
  const outputsTable = document.getElementById("outputs-table");
  const manifest = document.getElementById("job-manifest");
  const log = document.getElementById("attempt-log");
  const plan = document.getElementById("job-plan");
  let job;
  let live;
  /** The attempt whose log was last asked for. */
  let logShown;

  const current = () => job.attempts.find((attempt) => attempt.id === job.currentAttemptId);

  /** The current attempt's percent: its latest progress event, else what the Manager answered. */
  const currentPercent = () =>
    live?.attemptId === job.currentAttemptId && job.state !== "COMPLETED"
      ? live.percent
      : job.currentAttempt.progress;

  const renderProgress = () => {
    const cell = attempts.querySelector(`[data-attempt-progress="${job.currentAttemptId}"]`);
    if (cell) cell.textContent = formatPercent(currentPercent());
    const summaryCell = summary.querySelector('[data-field="progress"]');
    if (summaryCell) summaryCell.textContent = formatPercent(currentPercent());
    if (!SHOWS_PROGRESS.has(job.state)) {
      progress.replaceChildren(
        el("p", { text: t("job.notRunning", { state: t("common.jobState", { state: job.state }) }) }),
      );
      return;
    }
    // A retry's new attempt starts from nothing, whatever the previous one reported.
    const figures = live?.attemptId === job.currentAttemptId ? live : {};
    const percent = currentPercent() ?? 0;
    // Once completed, the encoding figures belong to the past: only the percent stays.
    const shown = job.state === "COMPLETED" ? { percent } : { ...figures, percent };
    progress.replaceChildren(progressView(shown, t("job.progressOfAttempt")));
  };

  const act = async (action, button) => {
    if (action.question && !window.confirm(action.question(job))) return;
    button.disabled = true;
    setStatus("action-result", t("job.acting", { action: t(action.label) }));
    try {
      await postJson(`/api/operations/jobs/${jobId}/${action.name}`);
      setStatus("action-result", t(action.done));
    } catch (error) {
      setStatus(
        "action-result",
        t("job.actionRefused", { action: t(action.label), error: errorMessage(error) }),
      );
    }
    await load();
  };

  const renderActions = () => {
    actions.replaceChildren(
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
        button.addEventListener("click", () => act(action, button));
        return el(
          "li",
          {},
          button,
          refusal === undefined ? null : el("span", { id: reasonId, class: "reason", text: refusal }),
        );
      }),
    );
  };

  const renderSummary = () => {
    const attempt = current();
    const rows = [
      [
        t("job.fieldState"),
        el("span", {
          class: `state state-${job.state}`,
          "data-field": "state",
          text: t("common.jobState", { state: job.state }),
        }),
      ],
      [
        t("job.fieldProgress"),
        el("span", { "data-field": "progress", text: formatPercent(currentPercent()) }),
      ],
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
      [
        t("job.fieldCapabilities"),
        job.requirements.requiredCapabilities.join(", ") || t("job.noCapabilities"),
      ],
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
    summary.replaceChildren(
      ...rows.flatMap(([term, value]) => [el("dt", { text: term }), el("dd", {}, value)]),
    );
  };

  const renderOutputs = () => {
    const body = outputsTable.querySelector("tbody");
    outputsTable.hidden = job.outputs.length === 0;
    setStatus(
      "outputs-status",
      job.outputs.length > 0 ? "" : job.state === "COMPLETED" ? t("job.noOutputs") : t("job.outputsLater"),
    );
    body.replaceChildren(
      ...job.outputs.map((output) =>
        el(
          "tr",
          { "data-output-id": output.id },
          el("th", { scope: "row", text: output.id }),
          el("td", {}, el("code", { text: output.uri })),
          el("td", { text: formatBytes(output.bytes) }),
          el("td", { text: formatSeconds(output.durationMs / 1000) }),
          el("td", { text: resolution(output) }),
          el("td", { text: output.codecs.join(", ") }),
        ),
      ),
    );
    const text = job.manifest ? JSON.stringify(job.manifest, null, 2) : "";
    manifest.hidden = job.manifest === null;
    if (manifest.textContent !== text) manifest.textContent = text;
    setStatus(
      "manifest-status",
      job.manifest
        ? t("job.manifestWritten", { uri: job.executionPlan.manifestUri })
        : job.executionPlan.manifestUri
          ? t("job.manifestLater", { uri: job.executionPlan.manifestUri })
          : t("job.noManifest"),
    );
  };

  const showLog = async (attempt) => {
    // Asked once per attempt on its own; a failure is not retried on every refetch.
    logShown = attempt.id;
    setStatus("log-status", t("job.logLoading", { attempt: attempt.attemptNumber }));
    try {
      const tail = await getJson(`/api/operations/jobs/${jobId}/attempts/${attempt.id}/log`);
      log.textContent = tail.text;
      log.hidden = false;
      const where = {
        attempt: attempt.attemptNumber,
        total: formatBytes(tail.totalBytes),
        uri: tail.logsUri,
      };
      setStatus(
        "log-status",
        tail.truncated
          ? t("job.logPart", { ...where, shown: formatBytes(new TextEncoder().encode(tail.text).length) })
          : t("job.logWhole", where),
      );
    } catch (error) {
      log.hidden = true;
      setStatus(
        "log-status",
        t("job.logMissing", { attempt: attempt.attemptNumber, error: errorMessage(error) }),
      );
    }
  };

  /** Worker names by id, asked once each; a Worker no longer listed keeps its id. */
  const workerNames = new Map();
  const workerCell = (workerId) => {
    if (!workerNames.has(workerId)) {
      workerNames.set(workerId, undefined);
      void getJson(`/api/operations/workers/${workerId}`).then(
        (worker) => {
          workerNames.set(workerId, worker.name);
          renderAttempts();
        },
        () => {},
      );
    }
    const name = workerNames.get(workerId);
    return el(
      "span",
      { "data-worker-id": workerId, title: workerId },
      name === undefined ? "" : `${name} `,
      el("code", { text: workerId.slice(0, 8) }),
    );
  };

  const renderAttempts = () => {
    attempts.replaceChildren(
      ...job.attempts.map((attempt) => {
        const logButton = attempt.logsUri
          ? el("button", {
              type: "button",
              class: "secondary",
              "data-log-attempt": attempt.attemptNumber,
              "aria-label": t("job.showLogOf", { attempt: attempt.attemptNumber }),
              text: t("job.showLog"),
              onclick: () => showLog(attempt),
            })
          : t("job.logNotUploaded");
        return el(
          "tr",
          { "data-attempt-id": attempt.id },
          el("td", { text: attempt.attemptNumber }),
          el("td", { text: t("common.attemptState", { state: attempt.state }) }),
          el("td", {}, attempt.workerId ? workerCell(attempt.workerId) : t("job.notDispatched")),
          el("td", {
            "data-attempt-progress": attempt.id,
            text: formatPercent(attempt.id === job.currentAttemptId ? currentPercent() : attempt.progress),
          }),
          el("td", {}, attempt.failureCode ? el("code", { text: attempt.failureCode }) : t("common.none")),
          el("td", { text: attempt.failureMessage ?? t("common.none") }),
          el("td", { text: attempt.startedAt ? formatTime(attempt.startedAt) : t("job.didNotStart") }),
          el("td", { text: formatTime(attempt.endedAt) }),
          el("td", {}, logButton),
        );
      }),
    );
    // The newest attempt with a log is shown without asking: that is where a failure is explained.
    const latest = job.attempts.findLast((attempt) => attempt.logsUri);
    if (latest && logShown !== latest.id) void showLog(latest);
  };

  const render = () => {
    renderSummary();
    renderProgress();
    renderActions();
    renderOutputs();
    renderAttempts();
    const planText = JSON.stringify(job.executionPlan, null, 2);
    if (plan.textContent !== planText) plan.textContent = planText;
  };

  let missing = false;
  const load = async () => {
    if (missing) return;
    try {
      job = await getJson(`/api/operations/jobs/${jobId}`);
      setStatus("view-status", "");
      render();
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        // One message, not a page of empty sections.
        missing = true;
        sections.hidden = true;
        setStatus("view-status", t("job.missing", { job: jobId }));
        return;
      }
      setStatus("view-status", t("job.loadFailed", { error: errorMessage(error) }));
    }
  };
  const reload = debounce(load, 250);

  void load();
  followEvents({
    query: `?jobId=${encodeURIComponent(jobId)}`,
    refetch: reload,
    onEvent: (event) => {
      if (event.kind !== "job.progress") return reload();
      live = event.data;
      if (job) renderProgress();
    },
  });
}
