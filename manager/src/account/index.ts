/**
 * The account portal (/api/v1/me…): every route is an accountRoute (audience account-portal),
 * and the account is always the token's subject, never a parameter.
 */
import { createRouter } from "../platform/http.ts";
import type { AccountDeps } from "./deps.ts";

export type { AccountDeps } from "./deps.ts";

/** Mounted under /api/v1. */
export function accountApp(_deps: AccountDeps) {
  return createRouter();
}
