/**
 * The submit form: a project from the projects the Manager knows, a template that fills the
 * form, and the plan's fields with its codecs, presets and containers offered as choices (the
 * page's data-* attributes carry the plan's enums). Every missing field is named at once before
 * anything is sent; a 400's `details` are shown each under the field its path names.
 */
import { ApiError, errorMessage, getJson, postJson } from "./api.js";
import { detailItems, el } from "./dom.js";
import { t } from "./i18n.js";

const TEMPLATES = {
  demo: {
    label: "submit.templateDemo",
    inputUri: "s3://media-in/demo/clip.mp4",
    manifestUri: "s3://media-out/demo/manifest.json",
    removedSegments: "5000-8000",
    outputs: [
      {
        id: "360p",
        container: "mp4",
        destinationUri: "s3://media-out/demo/360p.mp4",
        video: { codec: "h264", height: 360, preset: "fastest" },
        audio: { codec: "aac", bitrateKbps: 128 },
      },
      {
        id: "240p",
        container: "webm",
        destinationUri: "s3://media-out/demo/240p.webm",
        video: { codec: "vp9", height: 240, preset: "fastest" },
        audio: { codec: "opus", bitrateKbps: 96 },
      },
    ],
  },
  ladder: {
    label: "submit.templateLadder",
    inputUri: "s3://media-in/source.mp4",
    manifestUri: "s3://media-out/ladder/manifest.json",
    removedSegments: "",
    outputs: [1080, 720, 480].map((height) => ({
      id: `${height}p`,
      container: "mp4",
      destinationUri: `s3://media-out/ladder/${height}p.mp4`,
      video: { codec: "h264", height, preset: "medium" },
      audio: { codec: "aac", bitrateKbps: 128 },
    })),
  },
  audio: {
    label: "submit.templateAudio",
    inputUri: "s3://media-in/source.mp4",
    manifestUri: "",
    removedSegments: "",
    outputs: [
      {
        id: "audio",
        container: "mp4",
        destinationUri: "s3://media-out/audio/audio.m4a",
        audio: { codec: "aac", bitrateKbps: 128 },
      },
    ],
  },
};

const EMPTY_OUTPUT = {
  id: "",
  container: "mp4",
  destinationUri: "",
  video: { codec: "h264", height: undefined, preset: "medium" },
  audio: { codec: "aac", bitrateKbps: 128 },
};

const PLAN_PREFIX = "executionPlan.";

function select(id, name, values, selected, none) {
  return el(
    "select",
    { id, name, "aria-describedby": `${id}-errors` },
    ...(none ? [el("option", { value: "", text: none })] : []),
    ...values.map((value) => el("option", { value, text: value, selected: value === selected })),
  );
}

function field(id, label, control) {
  return el(
    "div",
    { class: "field" },
    el("label", { for: id, text: label }),
    control,
    el("ul", { id: `${id}-errors`, class: "field-errors" }),
  );
}

function input(id, name, value, attributes = {}) {
  return el("input", {
    id,
    name,
    value: value ?? "",
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": `${id}-errors`,
    ...attributes,
  });
}

const isS3 = (value) => /^s3:\/\/[^/]+\/.+/.test(value);

export function start(data) {
  const enums = {
    containers: data.containers.split(","),
    videoCodecs: data.videoCodecs.split(","),
    videoPresets: data.videoPresets.split(","),
    audioCodecs: data.audioCodecs.split(","),
  };
  const form = document.getElementById("submit-form");
  const summary = document.getElementById("submit-errors");
  const outputs = document.getElementById("outputs");
  const projects = document.getElementById("project-id");
  const templates = document.getElementById("template");
  let count = 0;

  /** One output's fieldset; `n` numbers it for people, its element ids use its index. */
  const outputFieldset = (output) => {
    const i = count++;
    const id = (name) => `output-${i}-${name}`;
    const fieldset = el(
      "fieldset",
      { class: "output", "data-output": i },
      el("legend", { text: t("submit.output", { n: outputs.children.length + 1 }) }),
      el(
        "div",
        { class: "row" },
        field(id("id"), t("submit.outputId"), input(id("id"), "id", output.id)),
        field(
          id("container"),
          t("submit.container"),
          select(id("container"), "container", enums.containers, output.container),
        ),
        el(
          "div",
          { class: "field wide" },
          el("label", { for: id("destinationUri"), text: t("submit.destination") }),
          input(id("destinationUri"), "destinationUri", output.destinationUri, { dir: "ltr" }),
          el("ul", { id: `${id("destinationUri")}-errors`, class: "field-errors" }),
        ),
      ),
      el(
        "div",
        { class: "row" },
        field(
          id("video-codec"),
          t("submit.videoCodec"),
          select(
            id("video-codec"),
            "videoCodec",
            enums.videoCodecs,
            output.video?.codec ?? "",
            t("submit.noVideo"),
          ),
        ),
        field(
          id("video-height"),
          t("submit.height"),
          input(id("video-height"), "videoHeight", output.video?.height, { type: "number", min: 2, step: 2 }),
        ),
        field(
          id("video-preset"),
          t("submit.preset"),
          select(id("video-preset"), "videoPreset", enums.videoPresets, output.video?.preset ?? "medium"),
        ),
        field(
          id("audio-codec"),
          t("submit.audioCodec"),
          select(
            id("audio-codec"),
            "audioCodec",
            enums.audioCodecs,
            output.audio?.codec ?? "",
            t("submit.noAudio"),
          ),
        ),
        field(
          id("audio-bitrateKbps"),
          t("submit.audioBitrate"),
          input(id("audio-bitrateKbps"), "audioBitrate", output.audio?.bitrateKbps ?? 128, {
            type: "number",
            min: 8,
          }),
        ),
      ),
      el("ul", { id: `output-${i}-errors`, class: "field-errors" }),
      el("button", {
        type: "button",
        class: "secondary",
        "data-remove-output": i,
        text: t("submit.removeOutput"),
        onclick: () => {
          fieldset.remove();
          renumber();
        },
      }),
    );
    return fieldset;
  };

  const renumber = () => {
    [...outputs.children].forEach((fieldset, n) => {
      fieldset.querySelector("legend").textContent = t("submit.output", { n: n + 1 });
      fieldset.querySelector("[data-remove-output]").disabled = outputs.children.length === 1;
    });
  };

  const fill = (template) => {
    form.elements.inputUri.value = template.inputUri;
    form.elements.manifestUri.value = template.manifestUri;
    document.getElementById("removed-segments").value = template.removedSegments;
    // Every fieldset is new: their ids start again at output-0.
    count = 0;
    outputs.replaceChildren();
    outputs.append(...template.outputs.map(outputFieldset));
    renumber();
  };

  templates.append(
    ...Object.entries(TEMPLATES).map(([name, template]) =>
      el("option", { value: name, text: t(template.label) }),
    ),
  );
  templates.addEventListener("change", () => {
    if (templates.value) fill(TEMPLATES[templates.value]);
  });
  document.getElementById("add-output").addEventListener("click", () => {
    outputs.append(outputFieldset(EMPTY_OUTPUT));
    renumber();
  });
  outputs.append(outputFieldset(EMPTY_OUTPUT));
  renumber();

  void getJson("/api/operations/projects?limit=100").then(
    (page) => {
      projects.replaceChildren(
        el("option", {
          value: "",
          text: page.items.length === 0 ? t("submit.noProject") : t("submit.chooseProject"),
        }),
        ...page.items.map((project) =>
          el("option", { value: project.id, text: `${project.organizationName} / ${project.name}` }),
        ),
      );
    },
    (error) => {
      projects.replaceChildren(el("option", { value: "", text: t("submit.projectsUnavailable") }));
      summary.replaceChildren(el("p", { text: t("submit.projectsFailed", { error: errorMessage(error) }) }));
    },
  );

  const clear = () => {
    summary.replaceChildren();
    for (const invalid of form.querySelectorAll('[aria-invalid="true"]'))
      invalid.removeAttribute("aria-invalid");
    for (const list of form.querySelectorAll(".field-errors")) list.replaceChildren();
  };

  /** The form's element a detail's path names, or the nearest enclosing one with an error list. */
  const targetOf = (path) => {
    if (path === "projectId") return "project-id";
    if (path === "priority") return "priority";
    if (!path.startsWith(PLAN_PREFIX)) return undefined;
    const planPath = path.slice(PLAN_PREFIX.length);
    if (planPath.startsWith("input")) return "input-uri";
    if (planPath.startsWith("manifestUri")) return "manifest-uri";
    if (planPath.startsWith("transforms.removedSegments")) return "removed-segments";
    const match = /^outputs\.(\d+)(.*)$/.exec(planPath);
    if (!match) return planPath.startsWith("outputs") ? "outputs" : undefined;
    // The Manager numbers the outputs it was sent; the form's ids number the fieldsets made.
    const fieldset = outputs.children[Number(match[1])];
    if (!fieldset) return "outputs";
    let rest = match[2].replace(/^\./, "").split(".");
    while (rest.length > 0) {
      const id = `output-${fieldset.dataset.output}-${rest.join("-")}`;
      if (document.getElementById(`${id}-errors`)) return id;
      rest = rest.slice(0, -1);
    }
    return `output-${fieldset.dataset.output}`;
  };

  /** Every problem under its field, and a summary at the top that takes the focus. */
  const show = (message, details) => {
    const general = [];
    for (const detail of details) {
      const target = targetOf(detail.path);
      const list = target && document.getElementById(`${target}-errors`);
      if (!list) {
        general.push(detail);
        continue;
      }
      document.getElementById(target)?.setAttribute("aria-invalid", "true");
      list.append(...detailItems([{ ...detail, path: "" }]));
    }
    summary.replaceChildren(el("p", { text: message }));
    if (general.length > 0) summary.append(el("ul", {}, ...detailItems(general)));
    summary.focus();
  };

  /** The plan the form describes, and every field missing or malformed (paths as the Manager's). */
  const read = () => {
    const problems = [];
    const value = (id) => document.getElementById(id).value.trim();
    const projectId = value("project-id");
    if (!projectId) problems.push({ path: "projectId", message: t("submit.needProject") });
    const inputUri = value("input-uri");
    if (!isS3(inputUri)) problems.push({ path: "executionPlan.input.uri", message: t("submit.needS3") });
    const manifestUri = value("manifest-uri");
    if (manifestUri && !isS3(manifestUri))
      problems.push({ path: "executionPlan.manifestUri", message: t("submit.mustBeS3") });
    const removedSegments = [];
    for (const part of value("removed-segments")
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
    const planOutputs = [...outputs.children].map((fieldset, n) => {
      const i = fieldset.dataset.output;
      const at = (name) => document.getElementById(`output-${i}-${name}`).value.trim();
      const path = `executionPlan.outputs.${n}`;
      const output = {
        id: at("id"),
        kind: "FILE",
        container: at("container"),
        destinationUri: at("destinationUri"),
      };
      if (!output.id) problems.push({ path: `${path}.id`, message: t("submit.needOutputId") });
      if (!isS3(output.destinationUri))
        problems.push({ path: `${path}.destinationUri`, message: t("submit.needS3") });
      if (at("video-codec")) {
        output.video = { codec: at("video-codec"), preset: at("video-preset") };
        if (at("video-height")) output.video.height = Number(at("video-height"));
      }
      if (at("audio-codec")) {
        output.audio = { codec: at("audio-codec") };
        if (at("audio-bitrateKbps")) output.audio.bitrateKbps = Number(at("audio-bitrateKbps"));
      }
      if (!output.video && !output.audio)
        problems.push({
          path: `${path}.video.codec`,
          message: t("submit.needCodec"),
        });
      return output;
    });
    if (planOutputs.length === 0)
      problems.push({ path: "executionPlan.outputs", message: t("submit.needOutput") });
    const executionPlan = {
      input: { uri: inputUri },
      outputs: planOutputs,
      ...(removedSegments.length > 0 ? { transforms: { removedSegments } } : {}),
      ...(manifestUri ? { manifestUri } : {}),
    };
    const priority = value("priority");
    return {
      body: { projectId, ...(priority === "" ? {} : { priority: Number(priority) }), executionPlan },
      problems,
    };
  };

  const describe = (count) => t("submit.problems", { count });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear();
    const { body, problems } = read();
    if (problems.length > 0) {
      show(t("submit.notSent", { problems: describe(problems.length) }), problems);
      return;
    }
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    try {
      const job = await postJson("/api/operations/jobs", body);
      location.assign(`/jobs/${job.id}`);
    } catch (error) {
      button.disabled = false;
      const details =
        error instanceof ApiError && Array.isArray(error.body?.details) ? error.body.details : [];
      show(
        details.length > 0
          ? t("submit.refused", { problems: describe(details.length), error: errorMessage(error) })
          : t("submit.notSubmitted", { error: errorMessage(error) }),
        details,
      );
    }
  });
}
