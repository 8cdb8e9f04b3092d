/**
 * The submit form: the plan as JSON, sent as the Manager takes it. A 400's `details` are shown
 * each at its path: under the field it names, the plan's paths relative to the plan.
 */
import { ApiError, errorMessage, postJson } from "./api.js";
import { detailItems, el } from "./dom.js";

const PLAN_PREFIX = "executionPlan.";

/** Which field a detail's path belongs to; undefined: the form as a whole. */
function fieldOf(path) {
  if (path === "projectId") return "project-id";
  if (path === "priority") return "priority";
  if (path === "executionPlan" || path.startsWith(PLAN_PREFIX)) return "execution-plan";
  return undefined;
}

export function start() {
  const form = document.getElementById("submit-form");
  const summary = document.getElementById("submit-errors");
  const fields = ["project-id", "priority", "execution-plan"];

  const clear = () => {
    summary.replaceChildren();
    for (const id of fields) {
      document.getElementById(id).removeAttribute("aria-invalid");
      document.getElementById(`${id}-errors`).replaceChildren();
    }
  };

  /** Every problem under its field, and a summary at the top that takes the focus. */
  const show = (message, details) => {
    const byField = new Map();
    const general = [];
    for (const detail of details) {
      const field = fieldOf(detail.path);
      if (field === undefined) general.push(detail);
      else byField.set(field, [...(byField.get(field) ?? []), detail]);
    }
    for (const [field, problems] of byField) {
      document.getElementById(field).setAttribute("aria-invalid", "true");
      document
        .getElementById(`${field}-errors`)
        .replaceChildren(...detailItems(problems, field === "execution-plan" ? PLAN_PREFIX : ""));
    }
    summary.replaceChildren(el("p", { text: message }));
    if (general.length > 0) summary.append(el("ul", {}, ...detailItems(general)));
    summary.focus();
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear();
    let executionPlan;
    try {
      executionPlan = JSON.parse(form.elements.executionPlan.value);
    } catch (error) {
      show("The job was not sent: the plan is not JSON.", [
        { path: "executionPlan", message: `not valid JSON (${error.message})` },
      ]);
      return;
    }
    const priority = form.elements.priority.value.trim();
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    try {
      const job = await postJson("/api/operations/jobs", {
        projectId: form.elements.projectId.value.trim(),
        ...(priority === "" ? {} : { priority: Number(priority) }),
        executionPlan,
      });
      location.assign(`/jobs/${job.id}`);
    } catch (error) {
      button.disabled = false;
      const details =
        error instanceof ApiError && Array.isArray(error.body?.details) ? error.body.details : [];
      const problems = details.length === 1 ? "1 problem" : `${details.length} problems`;
      show(
        details.length > 0
          ? `The Manager refused the job (${problems}): ${errorMessage(error)}`
          : `The job was not submitted: ${errorMessage(error)}`,
        details,
      );
    }
  });
}
