/**
 * A client's nested collections: resources (oauth_client_resources, the grants' table seen as a
 * list of resource keys), roles, users and directory sources. Each is a set of keys; adding one
 * present already or removing one absent changes nothing. Every change bumps the client's
 * authorization version in its transaction (each decides what the client's tokens may carry or
 * who may hold them) and writes one audit row.
 */
import type { Sql, TransactionSql as Tx } from "../../platform/db.ts";
import { writeAuditEvent } from "../audit.ts";
import { type ClientActor, findClient } from "./management.ts";

export const CLIENT_ROLES = ["operator", "client-admin"] as const;
export const DIRECTORY_SOURCES = ["built-in", "operator-issuer"] as const;

export type NestedKind = "resources" | "roles" | "users" | "directory-sources";

/** The table and key column of each kind (fixed names, never input). */
const TABLES: Record<NestedKind, { table: string; column: string; cast: string }> = {
  resources: { table: "oauth_client_resources", column: "resource", cast: "text" },
  roles: { table: "oauth_client_roles", column: "role", cast: "text" },
  users: { table: "oauth_client_users", column: "account_id", cast: "uuid" },
  "directory-sources": { table: "oauth_client_directory_sources", column: "source", cast: "text" },
};

/** The account to add to a client's users does not exist. */
export class UnknownAccountForClientError extends Error {}
/** The key is not in the client's collection. */
export class NestedEntryNotFoundError extends Error {}

export async function listNested(
  sql: Sql,
  reference: string,
  kind: NestedKind,
  actor?: ClientActor,
): Promise<string[]> {
  const client = await findClient(sql, reference, actor);
  const { table, column } = TABLES[kind];
  const rows = await sql<{ key: string }[]>`
    select ${sql(column)}::text as key from ${sql(table)} where client_id = ${client.id} order by 1`;
  return rows.map((row) => row.key);
}

async function locked(tx: Tx, reference: string, actor: ClientActor | undefined) {
  const client = await findClient(tx as unknown as Sql, reference, actor);
  await tx`select 1 from oauth_clients where id = ${client.id} for update`;
  return client;
}

/** Adds `key`; answers whether it was added (false: it was there already). */
export async function addNested(
  sql: Sql,
  actor: ClientActor,
  reference: string,
  kind: NestedKind,
  key: string,
): Promise<boolean> {
  const { table, column, cast } = TABLES[kind];
  return sql.begin(async (tx) => {
    const client = await locked(tx, reference, actor);
    if (kind === "users") {
      const [account] = await tx`select 1 from accounts where id = ${key}::uuid`;
      if (!account) throw new UnknownAccountForClientError("no account has this id");
    }
    const added = await tx`
      insert into ${tx(table)} (client_id, ${tx(column)}) values (${client.id}, ${key}::${tx.unsafe(cast)})
      on conflict do nothing`;
    if (added.count === 0) return false;
    await tx`
      update oauth_clients set authorization_version = authorization_version + 1,
        authorization_changed_at = now(), updated_at = now()
      where id = ${client.id}`;
    await writeAuditEvent(tx, {
      event: "client.nested-added",
      result: "success",
      actorAccountId: actor.accountId,
      clientId: client.clientId,
      details: { collection: kind, key },
    });
    return true;
  });
}

/** Removes `key`; NestedEntryNotFoundError when it is not there. */
export async function removeNested(
  sql: Sql,
  actor: ClientActor,
  reference: string,
  kind: NestedKind,
  key: string,
): Promise<void> {
  const { table, column, cast } = TABLES[kind];
  await sql.begin(async (tx) => {
    const client = await locked(tx, reference, actor);
    const removed = await tx`
      delete from ${tx(table)} where client_id = ${client.id}
        and ${tx(column)}::text = (${key}::${tx.unsafe(cast)})::text`;
    if (removed.count === 0) throw new NestedEntryNotFoundError(`not among the client's ${kind}`);
    await tx`
      update oauth_clients set authorization_version = authorization_version + 1,
        authorization_changed_at = now(), updated_at = now()
      where id = ${client.id}`;
    await writeAuditEvent(tx, {
      event: "client.nested-removed",
      result: "success",
      actorAccountId: actor.accountId,
      clientId: client.clientId,
      details: { collection: kind, key },
    });
  });
}
