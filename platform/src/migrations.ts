/**
 * Numbered, checksummed SQL migrations applied in one transaction under an advisory lock. A
 * change SQL cannot compute (a key made by TJM's own code) adds a code step: NNNN_name.ts beside
 * NNNN_name.sql, exporting `prepare(tx)`, run just before the SQL in the same transaction.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import type { Sql, TransactionSql } from "postgres";

/**
 * A migration's code step. It leaves what it computed where its SQL reads it (a temporary
 * table), so the SQL fails loudly if the step did not run, and the schema stays in the SQL.
 */
export type MigrationStep = (tx: TransactionSql) => Promise<void>;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Of the SQL only: the step runs once, and what it leaves is checked by the SQL after it. */
  checksum: string;
  prepare?: MigrationStep;
}

/**
 * A code step refused to go on (e.g. stored rows it cannot migrate without a person's decision):
 * the transaction is rolled back, nothing is applied, and the message says what to do.
 */
export class MigrationRefusedError extends Error {}

/**
 * Where a process records its migrations: the Manager's and the Admin console's share a schema
 * (a small installation has one database), each with its own table and advisory lock.
 */
export interface MigrationLedger {
  table: string;
  lock: string;
}

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

async function loadStep(directory: URL, fileName: string): Promise<MigrationStep> {
  const module: { prepare?: unknown } = await import(new URL(fileName, directory).href);
  if (typeof module.prepare !== "function") {
    throw new Error(`migration step ${fileName} does not export a function named prepare`);
  }
  return module.prepare as MigrationStep;
}

/** Reads the numbered .sql files in order; a gap or a stray file is an error, not a surprise later. */
export async function loadMigrations(directory: URL): Promise<Migration[]> {
  const files = await readdir(directory);
  const names = files.filter((name) => name.endsWith(".sql")).sort();
  const steps = files.filter((name) => name.endsWith(".ts"));
  for (const step of steps) {
    if (!names.includes(step.replace(/\.ts$/, ".sql")))
      throw new Error(`migration step ${step} has no migration NNNN_name.sql of the same name`);
  }
  const migrations: Migration[] = [];
  for (const [index, fileName] of names.entries()) {
    const match = FILE_NAME.exec(fileName);
    if (!match) throw new Error(`migration file ${fileName} is not named NNNN_name.sql`);
    const version = Number(match[1]);
    if (version !== index + 1)
      throw new Error(`migration ${fileName} is out of sequence: expected number ${index + 1}`);
    const sql = await readFile(new URL(fileName, directory), "utf8");
    const checksum = createHash("sha256").update(sql).digest("hex");
    const stepName = fileName.replace(/\.sql$/, ".ts");
    const prepare = steps.includes(stepName) ? await loadStep(directory, stepName) : undefined;
    migrations.push({ version, name: match[2] as string, sql, checksum, ...(prepare ? { prepare } : {}) });
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
      await migration.prepare?.(tx);
      await tx.unsafe(migration.sql);
      await tx`insert into ${tx(ledger.table)} (version, name, checksum) values (${migration.version}, ${migration.name}, ${migration.checksum})`;
    }
    return pending;
  });
}
