/**
 * A view's sections (the account page's, the clients view's): each has a status line
 * (`<section>-status`), a "sign in again" offer (`[data-reauth="<section>"]`), forms whose
 * fields show the Manager's 400 details, and actions run with their button disabled.
 */
import { ApiError } from "./api.js";
import { el, setStatus } from "./dom.js";

export const signInUrl = (parameters) => `/auth/sign-in?${new URLSearchParams(parameters)}`;

export function clearDetails(form) {
  for (const list of form.querySelectorAll(".field-errors")) list.replaceChildren();
  for (const field of form.querySelectorAll("[aria-invalid]")) field.removeAttribute("aria-invalid");
}

/** A 400's details under the fields they name; the first such field takes the focus. */
export function showDetails(form, details) {
  let first;
  for (const detail of details) {
    const field = form.elements[detail.path];
    const list = field && document.getElementById(`${field.id}-errors`);
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
 */
export function reportFailure(section, error, form, { failed, reauthNeeded, returnTo }) {
  const reauthentication =
    error instanceof ApiError &&
    error.status === 403 &&
    error.body?.code === "auth.reauthentication_required";
  if (reauthentication) {
    setStatus(`${section}-status`, reauthNeeded);
    const offer = document.querySelector(`[data-reauth="${section}"]`);
    const button = offer.querySelector("button");
    const asked = Number.isInteger(error.body.maxAge)
      ? { maxAge: String(error.body.maxAge) }
      : { prompt: "login" };
    button.onclick = () => location.assign(signInUrl({ returnTo, ...asked }));
    offer.hidden = false;
    button.focus();
    return;
  }
  if (form && error instanceof ApiError && Array.isArray(error.body?.details)) {
    showDetails(form, error.body.details);
  }
  setStatus(`${section}-status`, failed);
}

/** Runs a section's action with its button disabled, the section's status saying what happens. */
export async function act(section, button, working, run) {
  button.disabled = true;
  document.querySelector(`[data-reauth="${section}"]`).hidden = true;
  setStatus(`${section}-status`, working);
  try {
    await run();
  } finally {
    button.disabled = false;
  }
}
