/**
 * The Manager's migrations: manager/migrations/NNNN_name.sql (with NNNN_name.ts where the change
 * needs a code step), recorded in schema_migrations.
 */
import {
  loadMigrations as loadMigrationFiles,
  type Migration,
  type MigrationLedger,
  MigrationRefusedError,
  migrate as migrateLedger,
  pendingMigrations as pendingInLedger,
} from "@tjm/platform/migrations";
import type { Sql } from "./db.ts";

export type { Migration };
export { MigrationRefusedError };

const MANAGER_LEDGER: MigrationLedger = { table: "schema_migrations", lock: "tjm.migrations" };
const MANAGER_MIGRATIONS = new URL("../../migrations/", import.meta.url);

export function loadMigrations(directory: URL = MANAGER_MIGRATIONS): Promise<Migration[]> {
  return loadMigrationFiles(directory);
}

/** Pending migrations; throws when an applied one was edited or is unknown to this build. */
export function pendingMigrations(sql: Sql, schema: string, migrations: Migration[]): Promise<Migration[]> {
  return pendingInLedger(sql, schema, migrations, MANAGER_LEDGER);
}

export function migrate(sql: Sql, schema: string, migrations: Migration[]): Promise<Migration[]> {
  return migrateLedger(sql, schema, migrations, MANAGER_LEDGER);
}
