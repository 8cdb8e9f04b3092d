/**
 * Migration 0011 keys the accounts stored before it in code (its step 0011_identifier_keys.ts),
 * and refuses, listing them, when two stored addresses become one identifier: nothing is
 * applied until a person has decided which account keeps the address (docs/identifiers.md).
 */
import { runScript } from "@tjm/devstack/manager-process";
import { afterAll, describe, expect, inject, it } from "vitest";
import { emailKey } from "../../manager/src/identity/identifiers.ts";
import { createSql, type Sql } from "../../manager/src/platform/db.ts";
import {
  loadMigrations,
  type Migration,
  MigrationRefusedError,
  migrate,
  pendingMigrations,
} from "../../manager/src/platform/migrations.ts";
import { commandEnv, testServices } from "../harness/manager.ts";

const created: { schema: string; sql: Sql }[] = [];

afterAll(async () => {
  for (const { schema, sql } of created) {
    await sql`drop schema if exists ${sql(schema)} cascade`;
    await sql.end();
  }
});

/**
 * A schema migrated up to, not including, 0011; the client's search path is the schema.
 * `migrations` ends with 0011: the later ones are not this test's.
 */
async function schemaBeforeIdentifierKeys(): Promise<{ schema: string; sql: Sql; migrations: Migration[] }> {
  const schema = `${inject("schemaPrefix")}idk_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const sql = createSql({ url: testServices().databaseUrl, schema, poolMax: 2 });
  created.push({ schema, sql });
  const migrations = await loadMigrations();
  const keys = migrations.findIndex((m) => m.name === "identifier_keys");
  expect(keys).toBeGreaterThan(0);
  await migrate(sql, schema, migrations.slice(0, keys));
  return { schema, sql, migrations: migrations.slice(0, keys + 1) };
}

async function insertAccounts(sql: Sql, emails: string[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const email of emails) {
    const [row] = await sql<{ id: string }[]>`insert into accounts (email) values (${email}) returning id`;
    ids.set(email, (row as { id: string }).id);
  }
  return ids;
}

/** The lower(email) index let each pair in: lower() keeps them apart, the key does not. */
const COLLIDING = [
  ["strasse@example.com", "STRAẞE@example.com"],
  ["file@example.com", "ﬁle@example.com"],
  ["kiwi@example.com", "ｋｉｗｉ@example.com"],
];

describe("migration 0011_identifier_keys", () => {
  it("keys every stored account with the code's key, unique, in place of the lower(email) index", async () => {
    const { schema, sql, migrations } = await schemaBeforeIdentifierKeys();
    const emails = ["Ada@Example.COM", "İlse@example.com", "ΟΔΟΣ@example.com", "straße@example.com"];
    const ids = await insertAccounts(sql, emails);

    expect((await migrate(sql, schema, migrations)).map((m) => m.name)).toEqual(["identifier_keys"]);
    const rows = await sql<
      { id: string; email: string; emailKey: string }[]
    >`select id, email, email_key from accounts`;
    expect(rows).toHaveLength(emails.length);
    for (const row of rows) {
      expect(row.id).toBe(ids.get(row.email));
      expect(row.emailKey).toBe(emailKey(row.email));
    }
    const [index] =
      await sql`select indexdef from pg_indexes where schemaname = ${schema} and indexname = 'accounts_email_key'`;
    expect(index?.indexdef).toContain("(email_key)");
  });

  it("refuses when stored addresses collide, lists every one, and applies nothing", async () => {
    const { schema, sql, migrations } = await schemaBeforeIdentifierKeys();
    // U+FDFA is eighteen characters once normalised: this address has no key.
    const unkeyable = `${"\ufdfa".repeat(15)}@example.com`;
    const ids = await insertAccounts(sql, [...COLLIDING.flat(), unkeyable, "alone@example.com"]);

    const refusal = await migrate(sql, schema, migrations).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(MigrationRefusedError);
    const report = (refusal as Error).message;
    expect(report).toContain("3 group(s) of accounts");
    for (const pair of COLLIDING) {
      expect(report).toContain(`key ${JSON.stringify(emailKey(pair[0] as string))}`);
      for (const email of pair) {
        expect(report).toContain(`account ${ids.get(email)}  e-mail ${JSON.stringify(email)}`);
      }
    }
    expect(report).toContain(
      `1 account(s) whose e-mail address has no key:\n    account ${ids.get(unkeyable)}  e-mail ${JSON.stringify(unkeyable)}`,
    );
    expect(report).not.toContain("alone@example.com");
    expect((await pendingMigrations(sql, schema, migrations)).map((m) => m.name)).toEqual([
      "identifier_keys",
    ]);
    const [column] = await sql`
      select from information_schema.columns
      where table_schema = ${schema} and table_name = 'accounts' and column_name = 'email_key'`;
    expect(column).toBeUndefined();

    // `npm run migrate` prints the same list, as written, and exits non-zero.
    const migrated = await runScript(["migrate"], commandEnv(schema));
    expect(migrated.code).toBe(5);
    expect(migrated.stderr).toContain(report);

    // Once each collision has one account, and the address without a key is changed, it applies.
    for (const [, other] of COLLIDING) {
      await sql`update accounts set email = ${`renamed-${other}`} where id = ${ids.get(other as string) as string}`;
    }
    await sql`update accounts set email = 'shorter@example.com' where id = ${ids.get(unkeyable) as string}`;
    expect((await migrate(sql, schema, migrations)).map((m) => m.name)).toEqual(["identifier_keys"]);
  }, 60_000);
});
