/**
 * The console's migrations (admin/migrations/NNNN_name.sql), recorded in a table of their own
 * (admin_schema_migrations) so they can share a schema with the Manager's.
 */
import {
  loadMigrations as loadMigrationFiles,
  type Migration,
  type MigrationLedger,
  migrate as migrateLedger,
} from "@tjm/platform/migrations";
import type { Sql } from "postgres";

export type { Migration };

const ADMIN_LEDGER: MigrationLedger = { table: "admin_schema_migrations", lock: "tjm.admin-migrations" };
const ADMIN_MIGRATIONS = new URL("../../migrations/", import.meta.url);

export function loadMigrations(directory: URL = ADMIN_MIGRATIONS): Promise<Migration[]> {
  return loadMigrationFiles(directory);
}

export function migrate(sql: Sql, schema: string, migrations: Migration[]): Promise<Migration[]> {
  return migrateLedger(sql, schema, migrations, ADMIN_LEDGER);
}
