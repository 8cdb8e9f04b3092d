/**
 * An account deleting itself (the account portal): only after a recent sign-in, since a leaked
 * token must not be enough to erase an account. A refusal writes its failure row; a deletion
 * is deleteAccount's one transaction with its success row.
 */
import type { Sql } from "../../platform/db.ts";
import type { AccountPrincipal } from "../tokens/principals.ts";
import { requireRecentAuthenticationFor } from "../tokens/recent-authentication.ts";
import { type DeletedAccount, deleteAccount, UnknownAccountError } from "./store.ts";

export async function deleteOwnAccount(
  sql: Sql,
  principal: AccountPrincipal,
  reauthenticationMaxAgeSeconds: number,
  logoutsQueued: () => void,
): Promise<DeletedAccount> {
  await requireRecentAuthenticationFor(
    sql,
    { event: "account.deleted", details: { via: "portal", accountId: principal.accountId } },
    principal,
    reauthenticationMaxAgeSeconds,
  );
  const deleted = await deleteAccount(sql, principal.accountId, {
    via: "portal",
    clientId: principal.clientId,
    logoutsQueued,
  });
  // The standing check found the account a moment ago: only a concurrent deletion gets here.
  if (!deleted) throw new UnknownAccountError("the account no longer exists");
  return deleted;
}
