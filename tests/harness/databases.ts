/**
 * Whole databases on the shared PostgreSQL server, for tests of what a restored backup or a
 * re-created database does: created under a name unique to the run, dumped and restored with
 * the real pg_dump and pg_restore, dropped by the test.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";
import { createSql } from "../../manager/src/platform/db.ts";
import { testServices } from "./manager.ts";

const run = promisify(execFile);

export interface TestDatabase {
  name: string;
  url: string;
  /** Drops it (closing whatever connections are left) and creates it again, empty, under the same name. */
  recreate(): Promise<void>;
  drop(): Promise<void>;
}

async function onServer(statement: (admin: ReturnType<typeof createSql>) => Promise<unknown>): Promise<void> {
  const admin = createSql({ url: testServices().databaseUrl, schema: "public", poolMax: 1 });
  try {
    await statement(admin);
  } finally {
    await admin.end();
  }
}

/** A new, empty database on the shared server. */
export async function createDatabase(): Promise<TestDatabase> {
  const name = `${inject("schemaPrefix")}db_${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
  const url = new URL(testServices().databaseUrl);
  url.pathname = `/${name}`;
  const drop = () => onServer((admin) => admin`drop database if exists ${admin(name)} with (force)`);
  await onServer((admin) => admin`create database ${admin(name)}`);
  return {
    name,
    url: url.toString(),
    drop,
    async recreate() {
      await drop();
      await onServer((admin) => admin`create database ${admin(name)}`);
    },
  };
}

/** `pg_dump -Fc` of one schema; returns the dump file and a function removing it. */
export async function dumpSchema(
  database: TestDatabase,
  schema: string,
): Promise<{ file: string; remove(): Promise<void> }> {
  const directory = await mkdtemp(join(tmpdir(), "tjm-dump-"));
  const file = join(directory, `${schema}.dump`);
  await run("pg_dump", [
    "--format=custom",
    `--schema=${schema}`,
    `--file=${file}`,
    `--dbname=${database.url}`,
  ]);
  return { file, remove: () => rm(directory, { recursive: true, force: true }) };
}

/** `pg_restore` of a dump into a database (its schema is created there). */
export async function restoreDump(database: TestDatabase, file: string): Promise<void> {
  await run("pg_restore", ["--exit-on-error", "--no-owner", `--dbname=${database.url}`, file]);
}
