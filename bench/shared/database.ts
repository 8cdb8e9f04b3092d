import postgres from "postgres";
import type { Cleanup } from "./cleanup.ts";

/** The bench's own connection for creating and dropping schemas; never used for measuring. */
export function openAdminSql(databaseUrl: string): postgres.Sql {
  return postgres(databaseUrl, {
    max: 2,
    onnotice: () => {},
    connection: { application_name: "tjm-bench-admin" },
  });
}

/** Creates nothing: records that `schema` is the bench's and must be gone when the run ends. */
export function dropSchemaAtEnd(admin: postgres.Sql, schema: string, cleanup: Cleanup): void {
  cleanup.defer(`drop schema ${schema}`, async () => {
    await admin`drop schema if exists ${admin(schema)} cascade`;
  });
}

/**
 * Flushes dirty pages before each throughput measurement, so a checkpoint owed to the
 * previous one does not land inside it.
 */
export async function checkpoint(admin: postgres.Sql, log: (line: string) => void): Promise<void> {
  try {
    await admin`checkpoint`;
  } catch (err) {
    // Only superusers and pg_checkpoint members may; the numbers are just noisier without it.
    log(`checkpoint skipped: ${err instanceof Error ? err.message : String(err)}`);
  }
}
