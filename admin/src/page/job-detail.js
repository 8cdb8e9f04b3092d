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
import { followEvents } from "./live.js";

function cancelRefusal(state) {
  switch (state) {
    case "CANCEL_REQUESTED":
      return "Cancel: the job is already being cancelled";
    case "CANCELLED":
      return "Cancel: the job is already cancelled";
    case "COMPLETED":
    case "FAILED":
      return "Cancel: completed and failed jobs cannot be cancelled";
    default:
      return undefined;
  }
}

const ACTIONS = [
  {
    name: "cancel",
    label: "Cancel",
    question: (job) => `Cancel job ${job.id}? A Worker running it stops, and what it produced is discarded.`,
    done: "Cancel accepted.",
    refusal: (job) => cancelRefusal(job.state),
  },
  {
    name: "retry",
    label: "Retry",
    done: "Retry accepted: a new attempt is queued.",
    refusal: (job) => (job.state === "FAILED" ? undefined : "Retry: only failed jobs can be retried"),
  },
  {
    name: "resume-uploads",
    label: "Resume uploads",
    done: "Resume accepted: the Worker uploads the kept outputs again.",
    refusal: (job) =>
      job.state === "WAITING_FOR_STORAGE"
        ? undefined
        : "Resume uploads: only jobs waiting for storage have uploads to resume",
  },
];

const SHOWS_PROGRESS = new Set(["RUNNING", "CANCEL_REQUESTED", "COMPLETED"]);
const ENDED = new Set(["CANCELLED", "FAILED"]);

function resolution(output) {
  if (output.widthPx === null || output.heightPx === null) {
    return output.codecs.some((codec) => ["h264", "hevc", "av1", "vp9"].includes(codec))
      ? "not reported"
      : "audio only";
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
      progress.replaceChildren(el("p", { text: `Not running (${job.state}).` }));
      return;
    }
    // A retry's new attempt starts from nothing, whatever the previous one reported.
    const figures = live?.attemptId === job.currentAttemptId ? live : {};
    const percent = currentPercent() ?? 0;
    // Once completed, the encoding figures belong to the past: only the percent stays.
    const shown = job.state === "COMPLETED" ? { percent } : { ...figures, percent };
    progress.replaceChildren(progressView(shown, "Progress of the current attempt"));
  };

  const act = async (action, button) => {
    if (action.question && !window.confirm(action.question(job))) return;
    button.disabled = true;
    setStatus("action-result", `${action.label}…`);
    try {
      await postJson(`/api/operations/jobs/${jobId}/${action.name}`);
      setStatus("action-result", action.done);
    } catch (error) {
      setStatus("action-result", `${action.label} refused: ${errorMessage(error)}`);
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
          text: action.label,
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
      ["State", el("span", { class: `state state-${job.state}`, "data-field": "state", text: job.state })],
      ["Progress", el("span", { "data-field": "progress", text: formatPercent(currentPercent()) })],
    ];
    if (job.state === "FAILED" && attempt?.failureCode) {
      rows.push([
        "Failure",
        el(
          "span",
          { "data-field": "failure" },
          el("code", { text: attempt.failureCode }),
          ` ${attempt.failureMessage ?? ""}`,
        ),
      ]);
    }
    rows.push(
      ["Worker pool", job.workerPool],
      ["Priority", String(job.priority)],
      ["Project", job.projectId],
      ["Required capabilities", job.requirements.requiredCapabilities.join(", ") || "none"],
      ["Submitted", formatTime(job.createdAt)],
      ["Started", job.startedAt ? formatTime(job.startedAt) : "Not started"],
    );
    if (job.state === "COMPLETED") rows.push(["Completed", formatTime(job.completedAt)]);
    else if (ENDED.has(job.state)) {
      rows.push([
        job.state === "FAILED" ? "Failed" : "Cancelled",
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
      job.outputs.length > 0
        ? ""
        : job.state === "COMPLETED"
          ? "The job reported no outputs."
          : "Listed here once the job is COMPLETED.",
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
        ? `Written to ${job.executionPlan.manifestUri}`
        : job.executionPlan.manifestUri
          ? `Written to ${job.executionPlan.manifestUri} when the job completes.`
          : "The plan asks for no manifest.",
    );
  };

  const showLog = async (attempt) => {
    // Asked once per attempt on its own; a failure is not retried on every refetch.
    logShown = attempt.id;
    setStatus("log-status", `Loading the log of attempt ${attempt.attemptNumber}…`);
    try {
      const tail = await getJson(`/api/operations/jobs/${jobId}/attempts/${attempt.id}/log`);
      log.textContent = tail.text;
      log.hidden = false;
      setStatus(
        "log-status",
        `Attempt ${attempt.attemptNumber}, ${tail.truncated ? `the last ${formatBytes(new TextEncoder().encode(tail.text).length)} of ${formatBytes(tail.totalBytes)}` : `all ${formatBytes(tail.totalBytes)}`}, from ${tail.logsUri}`,
      );
    } catch (error) {
      log.hidden = true;
      setStatus("log-status", `No log for attempt ${attempt.attemptNumber}: ${errorMessage(error)}`);
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
              "aria-label": `Show log of attempt ${attempt.attemptNumber}`,
              text: "Show log",
              onclick: () => showLog(attempt),
            })
          : "Not uploaded yet";
        return el(
          "tr",
          { "data-attempt-id": attempt.id },
          el("td", { text: attempt.attemptNumber }),
          el("td", { text: attempt.state }),
          el("td", {}, attempt.workerId ? workerCell(attempt.workerId) : "Not dispatched"),
          el("td", {
            "data-attempt-progress": attempt.id,
            text: formatPercent(attempt.id === job.currentAttemptId ? currentPercent() : attempt.progress),
          }),
          el("td", {}, attempt.failureCode ? el("code", { text: attempt.failureCode }) : "—"),
          el("td", { text: attempt.failureMessage ?? "—" }),
          el("td", { text: attempt.startedAt ? formatTime(attempt.startedAt) : "Did not start" }),
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
        setStatus("view-status", `There is no job ${jobId}. It may have been mistyped; see all jobs.`);
        return;
      }
      setStatus("view-status", `Could not load the job: ${errorMessage(error)}`);
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
