/**
 * DOM helpers of the console's views: elements built from data (never from HTML strings), and
 * the figures every view shows, in the page's language (i18n.js).
 */
import { formattingLocale, locale, t } from "./i18n.js";

/**
 * An element with attributes and children: `text` sets its text, `on<event>` adds a listener,
 * `false`, null and undefined leave an attribute out.
 */
export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") element.textContent = String(value);
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  element.append(...children.filter((child) => child !== undefined && child !== null));
  return element;
}

/** Sets the text of a status region (`role="status"`), which screen readers announce. */
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

/** The one progress figure of every view: whole percent, rounded down. */
export function formatPercent(percent) {
  return percent === null || percent === undefined
    ? t("common.none")
    : t("common.percent", { percent: Math.floor(percent) });
}

/** Bytes as people read them, with the exact count: "1.5 MiB (1,572,864 bytes)". */
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

export function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined) return t("common.unknownDuration");
  const rounded = Math.round(seconds);
  if (rounded < 60) return t("common.seconds", { seconds: rounded });
  const minutes = Math.floor(rounded / 60);
  return minutes < 60
    ? t("common.minutesSeconds", { minutes, seconds: rounded % 60 })
    : t("common.hoursMinutes", { hours: Math.floor(minutes / 60), minutes: minutes % 60 });
}

/** "42 % · 30 fps · 1.50× · ETA 12 s"; figures ffmpeg has not reported are left out. */
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

/** A progress bar with its figures; `label` names what progresses, for screen readers. */
export function progressView(progress, label) {
  const percent = Math.max(0, Math.min(100, progress.percent ?? 0));
  return el(
    "div",
    { class: "progress" },
    el("progress", { max: 100, value: percent, "aria-label": label }),
    el("span", { class: "figures", text: describeProgress(progress) }),
  );
}

/** Calls `run` once, `delayMs` after the last of a burst of calls. */
export function debounce(run, delayMs) {
  let timer;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(run, delayMs);
  };
}

/** Shows the Manager's 400 `details` as list items, each at its path. */
export function detailItems(details, stripPrefix = "") {
  return details.map((detail) => {
    const path = detail.path.startsWith(stripPrefix) ? detail.path.slice(stripPrefix.length) : detail.path;
    return el(
      "li",
      {},
      path === "" ? null : el("code", { text: path }),
      path === "" ? "" : ": ",
      detail.message,
    );
  });
}

/**
 * One page of a list view: its rows in the table body (or the empty row), which rows of how many
 * in the position line, and the previous and next buttons enabled where there is a page to go to.
 */
export function showPage(
  { body, position, previous, next },
  { rows, columns, emptyText, offset, pageSize, total, positionText },
) {
  body.replaceChildren(...rows);
  if (rows.length === 0) body.append(el("tr", {}, el("td", { colspan: columns, text: emptyText })));
  position.textContent = positionText({
    first: rows.length === 0 ? 0 : offset + 1,
    last: offset + rows.length,
    total,
  });
  previous.disabled = offset === 0;
  next.disabled = offset + pageSize >= total;
}
