/**
 * The submit form's outputs: one fieldset per output (its id, container, destination, video and
 * audio), added, removed and filled from a template, read into the plan's outputs, and the
 * field a detail of the Manager's about an output names.
 */
import { byId, el, fieldValue } from "./dom.js";
import { errorsId, ids } from "./element-ids.js";
import { t } from "./i18n.js";

/** @typedef {import("./submit-templates.js").OutputTemplate} OutputTemplate */
/** @typedef {import("./dom.js").Problem} Problem */

/**
 * The plan's enums (the page's data-* attributes carry them): the choices the fields offer.
 * @typedef {{ containers: string[], videoCodecs: string[], videoPresets: string[], audioCodecs: string[] }} PlanEnums
 */

/**
 * An output of the plan as the form describes it.
 * @typedef {object} PlanOutput
 * @property {string} id
 * @property {"FILE"} kind
 * @property {string} container
 * @property {string} destinationUri
 * @property {{ codec: string, preset: string, height?: number }} [video]
 * @property {{ codec: string, bitrateKbps?: number }} [audio]
 */

/** @param {string} value */
export const isS3 = (value) => /^s3:\/\/[^/]+\/.+/.test(value);

/**
 * The element id of the field `name` of the fieldset numbered `fieldset` (the order it was made
 * in), or of the fieldset itself.
 * @param {string | number | undefined} fieldset
 * @param {string} [name]
 */
const outputFieldId = (fieldset, name) => `output-${fieldset}${name === undefined ? "" : `-${name}`}`;

/**
 * @param {string} id
 * @param {string} name
 * @param {string[]} values
 * @param {string} selected
 * @param {string} [none] the label of choosing none, if that is a choice
 */
function select(id, name, values, selected, none) {
  return el(
    "select",
    { id, name, "aria-describedby": errorsId(id) },
    ...(none ? [el("option", { value: "", text: none })] : []),
    ...values.map((value) => el("option", { value, text: value, selected: value === selected })),
  );
}

/**
 * @param {string} id
 * @param {string} label
 * @param {HTMLElement} control
 * @param {string} [kind] the field's class: "field", or "field wide"
 */
function field(id, label, control, kind = "field") {
  return el(
    "div",
    { class: kind },
    el("label", { for: id, text: label }),
    control,
    el("ul", { id: errorsId(id), class: "field-errors" }),
  );
}

/**
 * @param {string} id
 * @param {string} name
 * @param {string | number | undefined} value
 * @param {Record<string, import("./dom.js").AttributeValue>} [attributes]
 */
function input(id, name, value, attributes = {}) {
  return el("input", {
    id,
    name,
    value: value ?? "",
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": errorsId(id),
    ...attributes,
  });
}

/**
 * The row of what the output is and where it goes.
 * @param {(name: string) => string} id
 * @param {OutputTemplate} output
 * @param {PlanEnums} enums
 */
function destinationRow(id, output, enums) {
  return el(
    "div",
    { class: "row" },
    field(id("id"), t("submit.outputId"), input(id("id"), "id", output.id)),
    field(
      id("container"),
      t("submit.container"),
      select(id("container"), "container", enums.containers, output.container),
    ),
    field(
      id("destinationUri"),
      t("submit.destination"),
      input(id("destinationUri"), "destinationUri", output.destinationUri, { dir: "ltr" }),
      "field wide",
    ),
  );
}

/**
 * The row of how the output is encoded.
 * @param {(name: string) => string} id
 * @param {OutputTemplate} output
 * @param {PlanEnums} enums
 */
function encodingRow(id, output, enums) {
  const { video, audio } = output;
  return el(
    "div",
    { class: "row" },
    field(
      id("video-codec"),
      t("submit.videoCodec"),
      select(id("video-codec"), "videoCodec", enums.videoCodecs, video?.codec ?? "", t("submit.noVideo")),
    ),
    field(
      id("video-height"),
      t("submit.height"),
      input(id("video-height"), "videoHeight", video?.height, { type: "number", min: 2, step: 2 }),
    ),
    field(
      id("video-preset"),
      t("submit.preset"),
      select(id("video-preset"), "videoPreset", enums.videoPresets, video?.preset ?? "medium"),
    ),
    field(
      id("audio-codec"),
      t("submit.audioCodec"),
      select(id("audio-codec"), "audioCodec", enums.audioCodecs, audio?.codec ?? "", t("submit.noAudio")),
    ),
    field(
      id("audio-bitrateKbps"),
      t("submit.audioBitrate"),
      input(id("audio-bitrateKbps"), "audioBitrate", audio?.bitrateKbps ?? 128, { type: "number", min: 8 }),
    ),
  );
}

/** The outputs' fieldsets in the form. */
export class OutputFieldsets {
  #container = byId(ids.outputs, HTMLElement);
  #enums;
  /** Fieldsets made since the form was last filled: each one's element ids use its number. */
  #made = 0;

  /** @param {PlanEnums} enums */
  constructor(enums) {
    this.#enums = enums;
  }

  /** @param {OutputTemplate} output */
  add(output) {
    this.#container.append(this.#fieldset(output));
    this.#renumber();
  }

  /** @param {OutputTemplate[]} outputs */
  fill(outputs) {
    // Every fieldset is new: their ids start again at output-0.
    this.#made = 0;
    this.#container.replaceChildren();
    this.#container.append(...outputs.map((output) => this.#fieldset(output)));
    this.#renumber();
  }

  /**
   * One output's fieldset; its legend numbers it for people, its element ids use the number of
   * fieldsets made before it.
   * @param {OutputTemplate} output
   */
  #fieldset(output) {
    const made = this.#made++;
    /** @param {string} name */
    const id = (name) => outputFieldId(made, name);
    const fieldset = el(
      "fieldset",
      { class: "output", "data-output": made },
      el("legend", { text: t("submit.output", { n: this.#container.children.length + 1 }) }),
      destinationRow(id, output, this.#enums),
      encodingRow(id, output, this.#enums),
      el("ul", { id: errorsId(outputFieldId(made)), class: "field-errors" }),
      el("button", {
        type: "button",
        class: "secondary",
        "data-remove-output": made,
        text: t("submit.removeOutput"),
        onclick: () => {
          fieldset.remove();
          this.#renumber();
        },
      }),
    );
    return fieldset;
  }

  #fieldsets() {
    return [...this.#container.children].filter((child) => child instanceof HTMLFieldSetElement);
  }

  #renumber() {
    const fieldsets = this.#fieldsets();
    fieldsets.forEach((fieldset, n) => {
      const legend = fieldset.querySelector("legend");
      if (legend) legend.textContent = t("submit.output", { n: n + 1 });
      const remove = fieldset.querySelector("[data-remove-output]");
      if (remove instanceof HTMLButtonElement) remove.disabled = fieldsets.length === 1;
    });
  }

  /**
   * The plan's outputs, each field missing or malformed added to `problems` (at the path the
   * Manager would name).
   * @param {Problem[]} problems
   * @returns {PlanOutput[]}
   */
  read(problems) {
    return this.#fieldsets().map((fieldset, n) => {
      /** @param {string} name */
      const at = (name) => fieldValue(outputFieldId(fieldset.dataset.output, name));
      const path = `executionPlan.outputs.${n}`;
      /** @type {PlanOutput} */
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
        problems.push({ path: `${path}.video.codec`, message: t("submit.needCodec") });
      return output;
    });
  }

  /**
   * The id of the field a detail's path names under the plan's outputs (`outputs.<n>…`, `n` as
   * the Manager numbers the outputs it was sent), or of the nearest enclosing one with an
   * error list.
   * @param {string} planPath
   * @returns {string | undefined}
   */
  targetOf(planPath) {
    const match = /^outputs\.(\d+)(.*)$/.exec(planPath);
    if (!match) return planPath.startsWith("outputs") ? ids.outputs : undefined;
    const fieldset = this.#fieldsets()[Number(match[1])];
    if (!fieldset) return ids.outputs;
    let rest = (match[2] ?? "").replace(/^\./, "").split(".");
    while (rest.length > 0) {
      const id = outputFieldId(fieldset.dataset.output, rest.join("-"));
      if (document.getElementById(errorsId(id))) return id;
      rest = rest.slice(0, -1);
    }
    return outputFieldId(fieldset.dataset.output);
  }
}
