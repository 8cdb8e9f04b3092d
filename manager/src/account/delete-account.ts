// Not the aggregate's index: that loads password hashing (@node-rs/argon2), whose native binding
// a Deno Manager cannot load, and deleting needs none.
import { deleteAvatarsOf } from "../identity/accounts/avatars.ts";
import { deleteOwnAccount } from "../identity/accounts/delete-own.ts";
import { UnknownAccountError } from "../identity/accounts/store.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { AccountDeps } from "./deps.ts";

export const deleteAccountRoute = accountRoute({
  method: "delete",
  path: "/me",
  tags: ["account"],
  summary: "Delete the account",
  operationId: "deleteMe",
  description:
    "Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS (the token's auth_time); otherwise 403 `auth.reauthentication_required` with the `maxAge` to send to the provider. Deletes the account with its roles, factors, remembered browsers and developer apps, then, after the answer, its avatar objects in storage (stored and staged); ends every session (each client with a sid in one is sent a back-channel logout), grant and refresh token; every token of the account is refused from the next request on. The audit trail is kept and names the account by id; the e-mail address can be used by a new account. See docs/account-deletion.md.",
  responses: { 204: { description: "The account is deleted" } },
  errors: ["auth.reauthentication_required"],
});

export const deleteAccountHandler =
  (deps: AccountDeps): AppRouteHandler<typeof deleteAccountRoute> =>
  async (c) => {
    const { accountId } = c.get("account");
    try {
      await deleteOwnAccount(
        deps.sql,
        c.get("account"),
        deps.reauthenticationMaxAgeSeconds,
        deps.logoutsQueued,
      );
    } catch (err) {
      if (err instanceof UnknownAccountError) {
        throw new ApiError("auth.token_revoked", "the token's account no longer exists");
      }
      throw err;
    }
    // Not awaited: the answer does not wait on storage, whose retries last up to 30 s when it is
    // down; a failure is logged.
    void deleteAvatarsOf(deps.avatars, accountId, deps.logger);
    return c.body(null, 204);
  };
