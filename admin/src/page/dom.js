/**
 * DOM helpers of the console's views: elements built from data (never from HTML strings), the
 * elements the server wrote found with their kind checked, and the figures every view shows, in
 * the page's language (i18n.js).
 */
import { formattingLocale, locale, t } from "./i18n.js";

/** @typedef {string | number | boolean | null | undefined | ((event: Event) => void)} AttributeValue */
/** @typedef {Node | string | null | undefined} Child */

/**
 * An element with attributes and children: `text` sets its text, `on<event>` adds a listener,
 * `false`, null and undefined leave an attribute out.
 * @template {keyof HTMLElementTagNameMap} Tag
 * @param {Tag} tag
 * @param {Record<string, AttributeValue>} [attributes]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[Tag]}
 */
export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") element.textContent = String(value);
    else if (name.startsWith("on") && typeof value === "function")
      element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  element.append(...children.filter((child) => child !== undefined && child !== null));
  return element;
}

/**
 * The element of the view with id `id`, which must be a `kind` (HTMLFormElement, …): the server
 * wrote it, so one missing or of another kind is a bug, said here rather than as a null later.
 * @template {Element} Kind
 * @param {string} id
 * @param {new () => Kind} kind
 * @returns {Kind}
 */
export function byId(id, kind) {
  const element = document.getElementById(id);
  if (!(element instanceof kind)) throw new Error(`the view has no ${kind.name} with id '${id}'`);
  return element;
}

/**
 * The first element under `root` that `selector` matches, which must be a `kind`.
 * @template {Element} Kind
 * @param {ParentNode} root
 * @param {string} selector
 * @param {new () => Kind} kind
 * @returns {Kind}
 */
export function find(root, selector, kind) {
  const element = root.querySelector(selector);
  if (!(element instanceof kind)) throw new Error(`no ${kind.name} matches '${selector}'`);
  return element;
}

/**
 * The control of `form` named `name`, which must be a `kind` (HTMLInputElement, …).
 * @template {Element} Kind
 * @param {HTMLFormElement} form
 * @param {string} name
 * @param {new () => Kind} kind
 * @returns {Kind}
 */
export function control(form, name, kind) {
  const element = form.elements.namedItem(name);
  if (!(element instanceof kind)) throw new Error(`the form '${form.id}' has no ${kind.name} '${name}'`);
  return element;
}

/** @param {HTMLFormElement} form */
export const submitButton = (form) => find(form, 'button[type="submit"]', HTMLButtonElement);

/**
 * The body of the view's table `tableId`.
 * @param {string} tableId
 */
export const tableBody = (tableId) => find(byId(tableId, HTMLTableElement), "tbody", HTMLTableSectionElement);

/**
 * Sets the text of a status region (`role="status"`), which screen readers announce.
 * @param {string} id
 * @param {string} text
 */
export function setStatus(id, text) {
  const region = document.getElementById(id);
  if (region) region.textContent = text;
}

/** Whether the browser's Intl has the page's language (Chromium's has no Pashto, for one). */
const DATES_IN_BROWSER = Intl.DateTimeFormat.supportedLocalesOf([locale]).length > 0;

/** A date's figures in the Gregorian calendar with Latin digits, in the browser's time zone. */
const DATE_FIGURES = new Intl.DateTimeFormat("en-u-ca-gregory-nu-latn", {
  year: "numeric",
  month: "numeric",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
  timeZoneName: "short",
});

/**
 * A time with its date and its time zone ("Nov 27, 2026, 10:04:05 AM UTC"); "—" for none. In
 * the page's language, Gregorian with Latin digits, the browser's own time zone. A browser
 * without the language's data would write English: the catalogue's month names then.
 * @param {string | null | undefined} iso
 */
export function formatTime(iso) {
  if (!iso) return t("common.none");
  const date = new Date(iso);
  if (DATES_IN_BROWSER) {
    return date.toLocaleString(formattingLocale, { dateStyle: "medium", timeStyle: "long" });
  }
  const figures = Object.fromEntries(DATE_FIGURES.formatToParts(date).map((part) => [part.type, part.value]));
  return t("common.dateTime", {
    year: figures.year,
    month: `m${figures.month}`,
    day: figures.day,
    time: `${figures.hour}:${figures.minute}:${figures.second}`,
    zone: figures.timeZoneName,
  });
}

/**
 * The one progress figure of every view: whole percent, rounded down.
 * @param {number | null | undefined} percent
 */
export function formatPercent(percent) {
  return percent === null || percent === undefined
    ? t("common.none")
    : t("common.percent", { percent: Math.floor(percent) });
}

/**
 * Bytes as people read them, with the exact count: "1.5 MiB (1,572,864 bytes)".
 * @param {number} bytes
 */
export function formatBytes(bytes) {
  const units = ["", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const exact = t("common.bytes", { bytes });
  return unit === 0 ? exact : t("common.bytesUnit", { value, unit: units[unit], exact });
}

/** @param {number | null | undefined} seconds */
export function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined) return t("common.unknownDuration");
  const rounded = Math.round(seconds);
  if (rounded < 60) return t("common.seconds", { seconds: rounded });
  const minutes = Math.floor(rounded / 60);
  return minutes < 60
    ? t("common.minutesSeconds", { minutes, seconds: rounded % 60 })
    : t("common.hoursMinutes", { hours: Math.floor(minutes / 60), minutes: minutes % 60 });
}

/**
 * The figures of an encode ffmpeg reported (a job.progress event's), each possibly absent.
 * @typedef {object} ProgressFigures
 * @property {number | null} [percent]
 * @property {number | null} [fps]
 * @property {number | null} [speed]
 * @property {number | null} [etaSeconds]
 */

/**
 * "42 % · 30 fps · 1.50× · ETA 12 s"; figures ffmpeg has not reported are left out.
 * @param {ProgressFigures} progress
 */
export function describeProgress(progress) {
  const parts = [formatPercent(progress.percent ?? 0)];
  // ffmpeg's last block says 0 fps: nothing worth showing.
  if (progress.fps !== null && progress.fps !== undefined && progress.fps > 0)
    parts.push(t("common.fps", { fps: Math.round(progress.fps) }));
  if (progress.speed !== null && progress.speed !== undefined)
    parts.push(t("common.speed", { speed: progress.speed }));
  if (progress.etaSeconds !== null && progress.etaSeconds !== undefined)
    parts.push(t("common.eta", { duration: formatSeconds(progress.etaSeconds) }));
  return parts.join(" · ");
}

/**
 * A progress bar with its figures; `label` names what progresses, for screen readers.
 * @param {ProgressFigures} progress
 * @param {string} label
 */
export function progressView(progress, label) {
  const percent = Math.max(0, Math.min(100, progress.percent ?? 0));
  return el(
    "div",
    { class: "progress" },
    el("progress", { max: 100, value: percent, "aria-label": label }),
    el("span", { class: "figures", text: describeProgress(progress) }),
  );
}

/**
 * Calls `run` once, `delayMs` after the last of a burst of calls.
 * @param {() => unknown} run
 * @param {number} delayMs
 */
export function debounce(run, delayMs) {
  /** @type {number | undefined} */
  let timer;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(run, delayMs);
  };
}

/**
 * A problem at a path of a request's body: a detail of the Manager's 400, or one the page found
 * before sending.
 * @typedef {{ path: string, message: string }} Problem
 */

/**
 * Shows the Manager's 400 `details` as list items, each at its path.
 * @param {Problem[]} details
 */
export function detailItems(details) {
  return details.map(({ path, message }) =>
    el("li", {}, path === "" ? null : el("code", { text: path }), path === "" ? "" : ": ", message),
  );
}

/**
 * The value of the view's <body> data-* attribute `name` (as `dataset` names it), which the
 * server wrote for this view.
 * @param {DOMStringMap} data
 * @param {string} name
 */
export function viewData(data, name) {
  const value = data[name];
  if (value === undefined) throw new Error(`the view's <body> has no data-* attribute '${name}'`);
  return value;
}

/**
 * The value of the view's input or select `id`, trimmed.
 * @param {string} id
 */
export function fieldValue(id) {
  const field = document.getElementById(id);
  if (!(field instanceof HTMLInputElement || field instanceof HTMLSelectElement))
    throw new Error(`the view has no input or select with id '${id}'`);
  return field.value.trim();
}
