/**
 * The code step of 0011_identifier_keys.sql: keys every stored account's e-mail address with
 * the one normalisation (identity/identifiers.ts), which SQL cannot compute. Two accounts whose
 * addresses become one key, or an address that has none, need a person to decide which account
 * keeps it: the step refuses, lists them all, and the migration's transaction changes nothing.
 */
import { MigrationRefusedError } from "@tjm/platform/migrations";
import type { TransactionSql } from "postgres";
import { emailKey, InvalidIdentifierError } from "../src/identity/identifiers.ts";

interface StoredAccount {
  id: string;
  email: string;
  createdAt: string;
}

const describe = (account: StoredAccount) =>
  `    account ${account.id}  e-mail ${JSON.stringify(account.email)}  created ${account.createdAt}`;

/** Rows per insert: two parameters each, well under the protocol's 65,535. */
const BATCH = 1000;

export async function prepare(tx: TransactionSql): Promise<void> {
  // No account is created or renamed between its keying here and the SQL that stores the key.
  await tx`lock table accounts in share mode`;
  const accounts = await tx<StoredAccount[]>`
    select id, email, created_at::text from accounts order by created_at, id`;
  const byKey = new Map<string, StoredAccount[]>();
  const unkeyable: string[] = [];
  for (const account of accounts) {
    try {
      const key = emailKey(account.email);
      byKey.set(key, [...(byKey.get(key) ?? []), account]);
    } catch (err) {
      if (!(err instanceof InvalidIdentifierError)) throw err;
      unkeyable.push(`${describe(account)}: ${err.message}`);
    }
  }
  const collisions = [...byKey].filter(([, same]) => same.length > 1);
  if (collisions.length > 0 || unkeyable.length > 0) {
    const lines = [
      "migration 0011_identifier_keys refused: stored e-mail addresses need a decision (nothing was changed).",
      ...(collisions.length > 0
        ? [
            `${collisions.length} group(s) of accounts whose e-mail addresses are one identifier once normalised:`,
            ...collisions.flatMap(([key, same]) => [`  key ${JSON.stringify(key)}:`, ...same.map(describe)]),
          ]
        : []),
      ...(unkeyable.length > 0
        ? [`${unkeyable.length} account(s) whose e-mail address has no key:`, ...unkeyable]
        : []),
      "Give each account an address of its own (or delete the ones not wanted), then run the migration again; see docs/identifiers.md.",
    ];
    throw new MigrationRefusedError(lines.join("\n"));
  }
  await tx`create temporary table identifier_keys (account_id uuid primary key, email_key text not null)`;
  const rows = [...byKey].map(([key, [account]]) => ({
    accountId: (account as StoredAccount).id,
    emailKey: key,
  }));
  for (let start = 0; start < rows.length; start += BATCH) {
    await tx`insert into identifier_keys ${tx(rows.slice(start, start + BATCH), "accountId", "emailKey")}`;
  }
}
