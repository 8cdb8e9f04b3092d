/**
 * A view's sections (the account page's, the clients view's): each has a status line, a "sign in
 * again" offer (their ids from element-ids.js), forms whose fields show the Manager's 400
 * details, and actions run with their button disabled.
 */
import { ApiError, errorMessage } from "./api.js";
import { byId, el, find, setStatus } from "./dom.js";
import { errorsId, headingId, isSection, reauthId, statusId } from "./element-ids.js";
import { t } from "./i18n.js";

/** @typedef {import("./element-ids.js").Section} Section */
/** @typedef {import("./i18n.js").MessageKey} MessageKey */
/** @typedef {import("./i18n.js").MessageValues} MessageValues */
/** @typedef {import("./api.js").ErrorDetail} ErrorDetail */

/** @param {Record<string, string>} parameters */
export const signInUrl = (parameters) => `/auth/sign-in?${new URLSearchParams(parameters)}`;

/** @param {HTMLFormElement} form */
export function clearDetails(form) {
  for (const list of form.querySelectorAll(".field-errors")) list.replaceChildren();
  for (const field of form.querySelectorAll("[aria-invalid]")) field.removeAttribute("aria-invalid");
}

/**
 * A 400's details under the fields they name; the first such field takes the focus.
 * @param {HTMLFormElement} form
 * @param {ErrorDetail[]} details
 */
export function showDetails(form, details) {
  /** @type {HTMLElement | undefined} */
  let first;
  for (const detail of details) {
    const field = form.elements.namedItem(detail.path);
    if (!(field instanceof HTMLElement)) continue;
    const list = document.getElementById(errorsId(field.id));
    if (!list) continue;
    field.setAttribute("aria-invalid", "true");
    list.append(el("li", { text: detail.message }));
    first ??= field;
  }
  first?.focus();
}

/**
 * Says in the section's status why an action failed (`failed`, the text). A stale sign-in (403
 * auth.reauthentication_required) says `reauthNeeded` instead and shows the section's "sign in
 * again" button, with the focus: it signs in with the max_age the Manager named and comes back
 * to `returnTo`.
 * @param {Section} section
 * @param {unknown} error
 * @param {HTMLFormElement | undefined} form
 * @param {{ failed: string, reauthNeeded: string, returnTo: string }} texts
 */
function reportFailure(section, error, form, { failed, reauthNeeded, returnTo }) {
  if (
    error instanceof ApiError &&
    error.status === 403 &&
    error.body?.code === "auth.reauthentication_required"
  ) {
    setStatus(statusId(section), reauthNeeded);
    const offer = byId(reauthId(section), HTMLElement);
    const button = find(offer, "button", HTMLButtonElement);
    const maxAge = error.body.maxAge;
    /** @type {Record<string, string>} */
    const asked = Number.isInteger(maxAge) ? { maxAge: String(maxAge) } : { prompt: "login" };
    button.onclick = () => location.assign(signInUrl({ returnTo, ...asked }));
    offer.hidden = false;
    button.focus();
    return;
  }
  if (form && error instanceof ApiError && Array.isArray(error.body?.details)) {
    showDetails(form, error.body.details);
  }
  setStatus(statusId(section), failed);
}

/**
 * A view's report of its sections' failures: the text of `messageKey` with the error (and
 * `values`) put in, or the `reauthKey` text when the sign-in is too old, which signs in again
 * and comes back to `returnTo(section)`.
 * @param {MessageKey} reauthKey
 * @param {(section: Section) => string} returnTo
 */
export function failureReporter(reauthKey, returnTo) {
  /**
   * @param {Section} section
   * @param {MessageKey} messageKey
   * @param {unknown} error
   * @param {HTMLFormElement} [form]
   * @param {MessageValues} [values]
   */
  return (section, messageKey, error, form, values = {}) =>
    reportFailure(section, error, form, {
      failed: t(messageKey, { ...values, error: errorMessage(error) }),
      reauthNeeded: t(reauthKey),
      returnTo: returnTo(section),
    });
}

/** @typedef {ReturnType<typeof failureReporter>} ReportFailure */

/**
 * Runs a section's action with its button disabled, the section's status saying what happens.
 * @param {Section} section
 * @param {HTMLButtonElement} button
 * @param {string} working
 * @param {() => Promise<void>} run
 */
export async function act(section, button, working, run) {
  button.disabled = true;
  byId(reauthId(section), HTMLElement).hidden = true;
  setStatus(statusId(section), working);
  try {
    await run();
  } finally {
    button.disabled = false;
  }
}

/** Headings take the focus after an action removes the control that had it. */
export function focusableHeadings() {
  for (const heading of document.querySelectorAll("main section h2")) {
    if (heading instanceof HTMLElement) heading.tabIndex = -1;
  }
}

/** Back from signing in again for a section's action: that section's heading takes the focus. */
export function focusReturnedSection() {
  const section = location.hash.slice(1);
  if (isSection(section)) document.getElementById(headingId(section))?.focus();
}
