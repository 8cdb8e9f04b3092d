/**
 * The rooms' import rules (docs/architecture.md, "Rooms"), checked over the sources so a move
 * or a shortcut that breaks one fails here rather than in review.
 */
import { readdir, readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { REPOSITORY_ROOT } from "@tjm/devstack/manager-process";
import { describe, expect, it } from "vitest";

const IMPORT = /(?:^|\n)\s*(?:import|export)\s*(?:[^"'`;]*?from\s*)?["']([^"']+)["']/g;

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(join(REPOSITORY_ROOT, folder), { withFileTypes: true, recursive: true });
  return entries
    .filter(
      (entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.parentPath.includes("node_modules"),
    )
    .map((entry) => relative(REPOSITORY_ROOT, join(entry.parentPath, entry.name)));
}

/** Each relative import of `file`, resolved to a path from the repository root. */
async function relativeImports(file: string): Promise<string[]> {
  const text = await readFile(join(REPOSITORY_ROOT, file), "utf8");
  return [...text.matchAll(IMPORT)]
    .map((match) => match[1] as string)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => relative(REPOSITORY_ROOT, resolve(REPOSITORY_ROOT, file, "..", specifier)));
}

async function violations(folders: string[], forbidden: (target: string, file: string) => boolean) {
  const found: string[] = [];
  for (const folder of folders) {
    for (const file of await sourceFiles(folder)) {
      for (const target of await relativeImports(file)) {
        if (forbidden(target, file)) found.push(`${file} imports ${target}`);
      }
    }
  }
  return found;
}

const WORKSPACES = [
  "protocol",
  "storage",
  "platform",
  "devstack",
  "manager",
  "worker-agent",
  "bench",
  "scripts",
  "openapi",
  "sdk",
];

describe("the rooms' import rules", () => {
  it("no file outside tests/ imports from tests/", async () => {
    expect(await violations(WORKSPACES, (target) => target.startsWith("tests/"))).toEqual([]);
  });

  it("the shared workspaces and devstack import no process's source", async () => {
    expect(
      await violations(["protocol", "storage", "platform", "devstack"], (target) =>
        /^(manager|worker-agent)\//.test(target),
      ),
    ).toEqual([]);
  });

  it("the Manager and the Worker agent never import each other's source", async () => {
    expect(await violations(["manager"], (target) => target.startsWith("worker-agent/"))).toEqual([]);
    expect(await violations(["worker-agent"], (target) => target.startsWith("manager/"))).toEqual([]);
  });

  it("no room of the Worker agent imports its top level (main, agent, config)", async () => {
    const rooms = (await readdir(join(REPOSITORY_ROOT, "worker-agent/src"), { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => `worker-agent/src/${entry.name}`);
    expect(await violations(rooms, (target) => /^worker-agent\/src\/[^/]+\.ts$/.test(target))).toEqual([]);
  });

  it("the lifecycle table is pure: it imports no other room of the Manager", async () => {
    expect(
      await violations(
        ["manager/src/lifecycle"],
        (target) => target.startsWith("manager/") && !target.startsWith("manager/src/lifecycle/"),
      ),
    ).toEqual([]);
  });
});
