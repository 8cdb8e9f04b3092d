/**
 * Requests to the console's own origin, the only one the page talks to. Unsafe requests send
 * `content-type: application/json` (the console refuses any other: its CSRF rule), except the
 * one upload the console takes as it is, the avatar.
 */
import { t } from "./i18n.js";

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? t("common.answered", { status: String(status) }));
    this.status = status;
    this.body = body;
  }
}

/**
 * Set while the page signs out: the session is gone before the browser has left, and a 401 then
 * (a view refetching on a live event) must not send it to sign in again instead of signing out.
 */
let signingOut = false;

/**
 * The session ended, or (`stepUp`) the Manager wants a sign-in with a second factor
 * (auth.mfa_required): sign in again, then come back here.
 */
function signInAgain(stepUp = false) {
  if (signingOut) return;
  const returnTo = `${location.pathname}${location.search}`;
  location.assign(`/auth/sign-in?returnTo=${encodeURIComponent(returnTo)}${stepUp ? "&stepUp=mfa" : ""}`);
}

async function request(path, method, headers, body) {
  const response = await fetch(path, {
    method,
    headers: { accept: "application/json", ...headers },
    body,
    credentials: "same-origin",
    cache: "no-store",
  });
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    parsed = { message: text };
  }
  if (response.status === 401 && path.startsWith("/api/")) signInAgain();
  if (response.status === 403 && parsed?.code === "auth.mfa_required") signInAgain(true);
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

function send(method, path, body) {
  // A DELETE names JSON too, though it sends no body.
  const headers = method === "GET" ? {} : { "content-type": "application/json" };
  return request(path, method, headers, body === undefined ? undefined : JSON.stringify(body));
}

export const getJson = (path) => send("GET", path);
export const postJson = (path, body = {}) => send("POST", path, body);
export const patchJson = (path, body) => send("PATCH", path, body);
export const putJson = (path, body) => send("PUT", path, body);
export const deleteJson = (path) => send("DELETE", path);

/**
 * Ends the console session; the answer's `logoutUrl` is where the provider ends its own. The
 * caller navigates away next, so a 401 from then on is ignored unless the sign-out failed.
 */
export async function signOut() {
  signingOut = true;
  try {
    return await postJson("/auth/sign-out");
  } catch (error) {
    signingOut = false;
    throw error;
  }
}

/** A file as the body, its own type as the content type. */
export const postFile = (path, file) => request(path, "POST", { "content-type": file.type }, file);

export function errorMessage(error) {
  return error instanceof ApiError ? error.message : t("common.noAnswer");
}
