/** Numbered, checksummed SQL migrations applied in one transaction under an advisory lock. */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import type { Sql } from "postgres";

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

/**
 * Where a process records its migrations: the Manager's and the Admin console's share a schema
 * (a small installation has one database), each with its own table and advisory lock.
 */
export interface MigrationLedger {
  table: string;
  lock: string;
}

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Reads the numbered .sql files in order; a gap or a stray file is an error, not a surprise later. */
export async function loadMigrations(directory: URL): Promise<Migration[]> {
  const names = (await readdir(directory)).filter((name) => name.endsWith(".sql")).sort();
  const migrations: Migration[] = [];
  for (const [index, fileName] of names.entries()) {
    const match = FILE_NAME.exec(fileName);
    if (!match) throw new Error(`migration file ${fileName} is not named NNNN_name.sql`);
    const version = Number(match[1]);
    if (version !== index + 1)
      throw new Error(`migration ${fileName} is out of sequence: expected number ${index + 1}`);
    const sql = await readFile(new URL(fileName, directory), "utf8");
    const checksum = createHash("sha256").update(sql).digest("hex");
    migrations.push({ version, name: match[2] as string, sql, checksum });
  }
  return migrations;
}

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
}

async function appliedMigrations(sql: Sql, schema: string, ledger: MigrationLedger): Promise<AppliedRow[]> {
  const [table] = await sql`select to_regclass(${`${schema}.${ledger.table}`}) as name`;
  if (!table?.name) return [];
  return sql<
    AppliedRow[]
  >`select version, name, checksum from ${sql(schema)}.${sql(ledger.table)} order by version`;
}

/** Pending migrations; throws when an applied one was edited or is unknown to this build. */
export async function pendingMigrations(
  sql: Sql,
  schema: string,
  migrations: Migration[],
  ledger: MigrationLedger,
): Promise<Migration[]> {
  const applied = await appliedMigrations(sql, schema, ledger);
  for (const row of applied) {
    const known = migrations.find((m) => m.version === row.version);
    if (!known) {
      throw new Error(
        `the database has migration ${row.version} (${row.name}) which this build does not know: is this build older than the database?`,
      );
    }
    if (known.checksum !== row.checksum) {
      throw new Error(
        `migration ${row.version} (${row.name}) was changed after it was applied; add a new migration instead`,
      );
    }
  }
  return migrations.filter((m) => !applied.some((row) => row.version === m.version));
}

/**
 * Applies every pending migration in one transaction under an advisory lock, so two
 * migrators never collide: the second waits, then finds nothing left to do.
 */
export async function migrate(
  sql: Sql,
  schema: string,
  migrations: Migration[],
  ledger: MigrationLedger,
): Promise<Migration[]> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`${ledger.lock}:${schema}`}))`;
    await tx`create schema if not exists ${tx(schema)}`;
    await tx`set local search_path to ${tx(schema)}`;
    await tx`
      create table if not exists ${tx(ledger.table)} (
        version integer primary key,
        name text not null,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`;
    const pending = await pendingMigrations(tx as unknown as Sql, schema, migrations, ledger);
    for (const migration of pending) {
      await tx.unsafe(migration.sql);
      await tx`insert into ${tx(ledger.table)} (version, name, checksum) values (${migration.version}, ${migration.name}, ${migration.checksum})`;
    }
    return pending;
  });
}
