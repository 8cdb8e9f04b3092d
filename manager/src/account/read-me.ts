import { findProfile } from "../identity/accounts/index.ts";
import { mfaSummary } from "../identity/factors/index.ts";
import { countLiveSessions } from "../identity/sessions/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import {
  ACCOUNT_SNAPSHOT_EXAMPLE,
  type AccountSnapshot,
  AccountSnapshotSchema,
  toSnapshot,
} from "./profile-schema.ts";

export const readMeRoute = accountRoute({
  method: "get",
  path: "/me",
  operationId: "readMe",
  tags: ["account"],
  summary: "Read the account's snapshot",
  description:
    "The signed-in account (the token's subject): identifiers with their verified flags, profile, avatar URL, roles, MFA summary and how many sign-in sessions it has. Built-in provider only.",
  responses: { 200: jsonResponse("The account", AccountSnapshotSchema, ACCOUNT_SNAPSHOT_EXAMPLE) },
  errors: [],
});

/** The snapshot in queries run side by side: the account with its roles, its factors, its sessions' count. */
export async function readSnapshot(
  deps: Pick<AccountDeps, "sql">,
  accountId: string,
): Promise<AccountSnapshot> {
  const [profile, mfa, sessionCount] = await Promise.all([
    findProfile(deps.sql, accountId),
    mfaSummary(deps.sql, accountId),
    countLiveSessions(deps.sql, accountId),
  ]);
  // The standing check found the account a moment ago: it was deleted since.
  if (!profile) throw new ApiError("auth.token_revoked", "the account no longer exists");
  return toSnapshot(profile, mfa, sessionCount);
}

export const readMeHandler =
  (deps: AccountDeps): AppRouteHandler<typeof readMeRoute> =>
  async (c) => {
    c.header("cache-control", "no-store");
    return c.json(await readSnapshot(deps, c.get("account").accountId), 200);
  };
