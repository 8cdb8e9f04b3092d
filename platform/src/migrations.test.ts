import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { loadMigrations } from "./migrations.ts";

const directories: string[] = [];

afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

/** A migrations directory holding exactly these files. */
async function migrationsDirectory(files: Record<string, string>): Promise<URL> {
  const directory = await mkdtemp(join(tmpdir(), "tjm-migrations-"));
  directories.push(directory);
  for (const [name, text] of Object.entries(files)) await writeFile(join(directory, name), text);
  return pathToFileURL(`${directory}/`);
}

describe("loadMigrations with code steps", () => {
  it("attaches NNNN_name.ts's prepare to NNNN_name.sql, and checksums the SQL only", async () => {
    const sql = "create table a (id int);";
    const withStep = await loadMigrations(
      await migrationsDirectory({
        "0001_a.sql": sql,
        "0001_a.ts": "export async function prepare() {}",
        "0002_b.sql": "select 1;",
      }),
    );
    const withoutStep = await loadMigrations(await migrationsDirectory({ "0001_a.sql": sql }));
    expect(withStep.map((m) => [m.name, typeof m.prepare])).toEqual([
      ["a", "function"],
      ["b", "undefined"],
    ]);
    expect(withStep[0]?.checksum).toBe(withoutStep[0]?.checksum);
  });

  it("refuses a step without its SQL file, and one that exports no prepare", async () => {
    await expect(
      loadMigrations(
        await migrationsDirectory({
          "0001_a.sql": "select 1;",
          "0002_b.ts": "export async function prepare() {}",
        }),
      ),
    ).rejects.toThrow("migration step 0002_b.ts has no migration NNNN_name.sql of the same name");
    await expect(
      loadMigrations(
        await migrationsDirectory({ "0001_a.sql": "select 1;", "0001_a.ts": "export const x = 1;" }),
      ),
    ).rejects.toThrow("migration step 0001_a.ts does not export a function named prepare");
  });
});
