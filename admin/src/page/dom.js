/** DOM helpers of the console's views: elements built from data (never from HTML strings). */

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

export function formatTime(iso) {
  return iso ? new Date(iso).toLocaleString() : "—";
}

export function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined) return "unknown";
  const rounded = Math.round(seconds);
  if (rounded < 60) return `${rounded} s`;
  const minutes = Math.floor(rounded / 60);
  return minutes < 60
    ? `${minutes} min ${rounded % 60} s`
    : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** "42 % · 30 fps · 1.50× · ETA 12 s"; figures ffmpeg has not reported are left out. */
export function describeProgress(progress) {
  const parts = [`${Math.floor(progress.percent ?? 0)} %`];
  if (progress.fps !== null && progress.fps !== undefined) parts.push(`${Math.round(progress.fps)} fps`);
  if (progress.speed !== null && progress.speed !== undefined) parts.push(`${progress.speed.toFixed(2)}×`);
  if (progress.etaSeconds !== null && progress.etaSeconds !== undefined)
    parts.push(`ETA ${formatSeconds(progress.etaSeconds)}`);
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
