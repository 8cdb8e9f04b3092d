/**
 * Requests to the console's own origin, the only one the page talks to. Unsafe requests send
 * `content-type: application/json` (the console refuses any other: its CSRF rule), except the
 * one upload the console takes as it is, the avatar.
 *
 * An answer is typed where it is used, with the API document's schema of that operation
 * (`@tjm/sdk`): the console forwards the Manager's answers as they are.
 */
import { t } from "./i18n.js";

/** @typedef {import("@tjm/sdk").components["schemas"]} Schemas */
/** @typedef {Schemas["ErrorDetail"]} ErrorDetail */

/**
 * What a refusal's body may hold: the Manager's error (a code, a 400's details, the max_age a
 * sign-in again needs), or only a message when it was not JSON.
 * @typedef {object} ErrorBody
 * @property {string} [message]
 * @property {string} [code]
 * @property {number} [maxAge]
 * @property {ErrorDetail[]} [details]
 */

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {ErrorBody | null} body
   */
  constructor(status, body) {
    super(body?.message ?? t("common.answered", { status: String(status) }));
    this.status = status;
    this.body = body;
  }
}

/**
 * A 400's details, if `error` is one that has them.
 * @param {unknown} error
 * @returns {ErrorDetail[]}
 */
export function errorDetails(error) {
  return error instanceof ApiError && Array.isArray(error.body?.details) ? error.body.details : [];
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

/**
 * @param {string} path
 * @param {string} method
 * @param {Record<string, string>} headers
 * @param {BodyInit | undefined} body
 * @returns {Promise<any>} the answer's JSON, typed by the caller
 */
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

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 */
function send(method, path, body) {
  // A DELETE names JSON too, though it sends no body.
  /** @type {Record<string, string>} */
  const headers = method === "GET" ? {} : { "content-type": "application/json" };
  return request(path, method, headers, body === undefined ? undefined : JSON.stringify(body));
}

/** @param {string} path */
export const getJson = (path) => send("GET", path);
/** @param {string} path @param {unknown} [body] */
export const postJson = (path, body = {}) => send("POST", path, body);
/** @param {string} path @param {unknown} body */
export const patchJson = (path, body) => send("PATCH", path, body);
/** @param {string} path @param {unknown} body */
export const putJson = (path, body) => send("PUT", path, body);
/** @param {string} path */
export const deleteJson = (path) => send("DELETE", path);

/**
 * Ends the console session; the answer's `logoutUrl` is where the provider ends its own. The
 * caller navigates away next, so a 401 from then on is ignored unless the sign-out failed.
 * @returns {Promise<{ logoutUrl: string }>}
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

/**
 * A file as the body, its own type as the content type.
 * @param {string} path
 * @param {File} file
 */
export const postFile = (path, file) => request(path, "POST", { "content-type": file.type }, file);

/** @param {unknown} error */
export function errorMessage(error) {
  return error instanceof ApiError ? error.message : t("common.noAnswer");
}
