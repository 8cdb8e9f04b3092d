/**
 * Requests to the console's own origin, the only one the page talks to. Unsafe requests send
 * `content-type: application/json`: the console refuses any other (its CSRF rule).
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
 * The session ended, or (`stepUp`) the Manager wants a sign-in with a second factor
 * (auth.mfa_required): sign in again, then come back here.
 */
function signInAgain(stepUp = false) {
  const returnTo = `${location.pathname}${location.search}`;
  location.assign(`/auth/sign-in?returnTo=${encodeURIComponent(returnTo)}${stepUp ? "&stepUp=mfa" : ""}`);
}

async function send(method, path, body) {
  const headers = { accept: "application/json" };
  const init = { method, headers, credentials: "same-origin", cache: "no-store" };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
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

export const getJson = (path) => send("GET", path);
export const postJson = (path, body = {}) => send("POST", path, body);

export function errorMessage(error) {
  return error instanceof ApiError ? error.message : t("common.noAnswer");
}
