/**
 * The submit form: a project from the projects the Manager knows, a template that fills the
 * form, and the plan's fields with its codecs, presets and containers offered as choices (the
 * page's data-* attributes carry the plan's enums). Every missing field is named at once before
 * anything is sent; a 400's `details` are shown each under the field its path names.
 */
import { errorDetails, errorMessage, getJson, postJson } from "./api.js";
import { byId, control, detailItems, el, fieldValue, submitButton, viewData } from "./dom.js";
import { errorsId, ids } from "./element-ids.js";
import { t } from "./i18n.js";
import { isS3, OutputFieldsets } from "./submit-outputs.js";
import { EMPTY_OUTPUT, TEMPLATES } from "./submit-templates.js";

/** @typedef {import("./dom.js").Problem} Problem */
/** @typedef {import("@tjm/sdk").components["schemas"]["ProjectList"]} ProjectList */
/** @typedef {import("@tjm/sdk").Job} Job */

const PLAN_PREFIX = "executionPlan.";

/**
 * The element a detail's path names, or the nearest enclosing one with an error list.
 * @param {string} path
 * @param {OutputFieldsets} outputs
 */
function targetOf(path, outputs) {
  if (path === "projectId") return ids.projectId;
  if (path === "priority") return ids.priority;
  if (!path.startsWith(PLAN_PREFIX)) return undefined;
  const planPath = path.slice(PLAN_PREFIX.length);
  if (planPath.startsWith("input")) return ids.inputUri;
  if (planPath.startsWith("manifestUri")) return ids.manifestUri;
  if (planPath.startsWith("transforms.removedSegments")) return ids.removedSegments;
  return outputs.targetOf(planPath);
}

/**
 * Every problem under its field, and a summary at the top that takes the focus.
 * @param {string} message
 * @param {Problem[]} details
 * @param {OutputFieldsets} outputs
 */
function showProblems(message, details, outputs) {
  const summary = byId(ids.submitErrors, HTMLElement);
  /** @type {Problem[]} */
  const general = [];
  for (const detail of details) {
    const target = targetOf(detail.path, outputs);
    const list = target && document.getElementById(errorsId(target));
    if (!target || !list) {
      general.push(detail);
      continue;
    }
    document.getElementById(target)?.setAttribute("aria-invalid", "true");
    list.append(...detailItems([{ ...detail, path: "" }]));
  }
  summary.replaceChildren(el("p", { text: message }));
  if (general.length > 0) summary.append(el("ul", {}, ...detailItems(general)));
  summary.focus();
}

/**
 * The removed segments ("5000-8000, 12000-13000"), each part that is not one added to `problems`.
 * @param {Problem[]} problems
 */
function readRemovedSegments(problems) {
  const removedSegments = [];
  for (const part of fieldValue(ids.removedSegments)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = /^(\d+)\s*-\s*(\d+)$/.exec(part);
    if (match) removedSegments.push({ startMs: Number(match[1]), endMs: Number(match[2]) });
    else
      problems.push({
        path: "executionPlan.transforms.removedSegments",
        message: t("submit.badSegment", { part }),
      });
  }
  return removedSegments;
}

/**
 * The submission the form describes, and every field missing or malformed (paths as the Manager's).
 * @param {OutputFieldsets} outputs
 */
function readSubmission(outputs) {
  /** @type {Problem[]} */
  const problems = [];
  const projectId = fieldValue(ids.projectId);
  if (!projectId) problems.push({ path: "projectId", message: t("submit.needProject") });
  const inputUri = fieldValue(ids.inputUri);
  if (!isS3(inputUri)) problems.push({ path: "executionPlan.input.uri", message: t("submit.needS3") });
  const manifestUri = fieldValue(ids.manifestUri);
  if (manifestUri && !isS3(manifestUri))
    problems.push({ path: "executionPlan.manifestUri", message: t("submit.mustBeS3") });
  const removedSegments = readRemovedSegments(problems);
  const planOutputs = outputs.read(problems);
  if (planOutputs.length === 0)
    problems.push({ path: "executionPlan.outputs", message: t("submit.needOutput") });
  const executionPlan = {
    input: { uri: inputUri },
    outputs: planOutputs,
    ...(removedSegments.length > 0 ? { transforms: { removedSegments } } : {}),
    ...(manifestUri ? { manifestUri } : {}),
  };
  const priority = fieldValue(ids.priority);
  return {
    body: { projectId, ...(priority === "" ? {} : { priority: Number(priority) }), executionPlan },
    problems,
  };
}

/** Offers the projects the Manager knows; the summary says so when it could not be asked. */
async function loadProjects() {
  const projects = byId(ids.projectId, HTMLSelectElement);
  /** @type {ProjectList} */
  let page;
  try {
    page = await getJson("/api/operations/projects?limit=100");
  } catch (error) {
    projects.replaceChildren(el("option", { value: "", text: t("submit.projectsUnavailable") }));
    byId(ids.submitErrors, HTMLElement).replaceChildren(
      el("p", { text: t("submit.projectsFailed", { error: errorMessage(error) }) }),
    );
    return;
  }
  projects.replaceChildren(
    el("option", {
      value: "",
      text: page.items.length === 0 ? t("submit.noProject") : t("submit.chooseProject"),
    }),
    ...page.items.map((project) =>
      el("option", { value: project.id, text: `${project.organizationName} / ${project.name}` }),
    ),
  );
}

/**
 * @param {HTMLFormElement} form
 * @param {OutputFieldsets} outputs
 */
async function submit(form, outputs) {
  byId(ids.submitErrors, HTMLElement).replaceChildren();
  for (const invalid of form.querySelectorAll('[aria-invalid="true"]'))
    invalid.removeAttribute("aria-invalid");
  for (const list of form.querySelectorAll(".field-errors")) list.replaceChildren();
  /** @param {number} count */
  const describe = (count) => t("submit.problems", { count });
  const { body, problems } = readSubmission(outputs);
  if (problems.length > 0) {
    showProblems(t("submit.notSent", { problems: describe(problems.length) }), problems, outputs);
    return;
  }
  const button = submitButton(form);
  button.disabled = true;
  try {
    /** @type {Job} */
    const job = await postJson("/api/operations/jobs", body);
    location.assign(`/jobs/${job.id}`);
  } catch (error) {
    button.disabled = false;
    const details = errorDetails(error);
    showProblems(
      details.length > 0
        ? t("submit.refused", { problems: describe(details.length), error: errorMessage(error) })
        : t("submit.notSubmitted", { error: errorMessage(error) }),
      details,
      outputs,
    );
  }
}

/** @param {DOMStringMap} data */
export function start(data) {
  const outputs = new OutputFieldsets({
    containers: viewData(data, "containers").split(","),
    videoCodecs: viewData(data, "videoCodecs").split(","),
    videoPresets: viewData(data, "videoPresets").split(","),
    audioCodecs: viewData(data, "audioCodecs").split(","),
  });
  const form = byId(ids.submitForm, HTMLFormElement);
  const templates = byId(ids.template, HTMLSelectElement);
  templates.append(
    ...Object.entries(TEMPLATES).map(([name, template]) =>
      el("option", { value: name, text: t(template.label) }),
    ),
  );
  templates.addEventListener("change", () => {
    const template = TEMPLATES[templates.value];
    if (template === undefined) return;
    control(form, "inputUri", HTMLInputElement).value = template.inputUri;
    control(form, "manifestUri", HTMLInputElement).value = template.manifestUri;
    byId(ids.removedSegments, HTMLInputElement).value = template.removedSegments;
    outputs.fill(template.outputs);
  });
  byId(ids.addOutput, HTMLButtonElement).addEventListener("click", () => outputs.add(EMPTY_OUTPUT));
  outputs.add(EMPTY_OUTPUT);
  void loadProjects();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void submit(form, outputs);
  });
}
