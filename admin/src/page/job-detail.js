/**
 * One job: its summary, live progress, every attempt with its failure code, the plan, and the
 * cancel / retry / resume-uploads actions, each disabled with the reason when the state does
 * not allow it (the same rules the Manager applies; it still has the last word).
 */
import { errorMessage, getJson, postJson } from "./api.js";
import { debounce, el, formatTime, progressView, setStatus } from "./dom.js";
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
  { name: "cancel", label: "Cancel", done: "Cancel accepted.", refusal: (job) => cancelRefusal(job.state) },
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

export function start({ jobId }) {
  const summary = document.getElementById("job-summary");
  const progress = document.getElementById("job-progress");
  const actions = document.getElementById("job-actions");
  const attempts = document.querySelector("#attempts-table tbody");
  const plan = document.getElementById("job-plan");
  let job;
  let live;

  const renderProgress = () => {
    if (!SHOWS_PROGRESS.has(job.state)) {
      progress.replaceChildren(el("p", { text: `Not running (${job.state}).` }));
      return;
    }
    // A retry's new attempt starts from nothing, whatever the previous one reported.
    const current = live?.attemptId === job.currentAttemptId ? live : undefined;
    const shown =
      job.state === "COMPLETED"
        ? { ...current, percent: 100, etaSeconds: null }
        : (current ?? { percent: job.currentAttempt.progress ?? 0 });
    progress.replaceChildren(progressView(shown, "Progress of the current attempt"));
  };

  const act = async (action, button) => {
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

  const render = () => {
    summary.replaceChildren(
      ...[
        ["State", el("span", { class: `state state-${job.state}`, "data-field": "state", text: job.state })],
        ["Worker pool", job.workerPool],
        ["Priority", String(job.priority)],
        ["Project", job.projectId],
        ["Required capabilities", job.requirements.requiredCapabilities.join(", ") || "none"],
        ["Submitted", formatTime(job.createdAt)],
        ["Started", formatTime(job.startedAt)],
        ["Completed", formatTime(job.completedAt)],
      ].flatMap(([term, value]) => [el("dt", { text: term }), el("dd", {}, value)]),
    );
    renderProgress();
    renderActions();
    attempts.replaceChildren(
      ...job.attempts.map((attempt) =>
        el(
          "tr",
          {},
          el("td", { text: attempt.attemptNumber }),
          el("td", { text: attempt.state }),
          el("td", { text: attempt.progress === null ? "—" : `${Math.floor(attempt.progress)} %` }),
          el("td", {}, attempt.failureCode ? el("code", { text: attempt.failureCode }) : "—"),
          el("td", { text: attempt.failureMessage ?? "—" }),
          el("td", { text: formatTime(attempt.createdAt) }),
        ),
      ),
    );
    const planText = JSON.stringify(job.executionPlan, null, 2);
    if (plan.textContent !== planText) plan.textContent = planText;
  };

  const load = async () => {
    try {
      job = await getJson(`/api/operations/jobs/${jobId}`);
      setStatus("view-status", "");
      render();
    } catch (error) {
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
