/**
 * The rooms' import rules (docs/architecture.md, "Rooms"), and the shape of the console's page
 * scripts (type-checked, short functions), checked over the sources so a move or a shortcut that
 * breaks one fails here rather than in review.
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { REPOSITORY_ROOT } from "@tjm/devstack/manager-process";
import ts from "typescript";
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
  return importsIn(file, await readFile(join(REPOSITORY_ROOT, file), "utf8"));
}

/** The relative imports of `text` as if it were `file`: how a planted import is checked. */
function importsIn(file: string, text: string): string[] {
  return [...text.matchAll(IMPORT)]
    .map((match) => match[1] as string)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => relative(REPOSITORY_ROOT, resolve(REPOSITORY_ROOT, file, "..", specifier)));
}

/** The Manager's room rules for its identity domain (docs/architecture.md, "Rooms"). */
const MANAGER_ROOM_RULES = [
  {
    rule: "nothing under platform/ imports a feature room",
    folder: "manager/src/platform",
    forbidden: (target: string) =>
      target.startsWith("manager/src/") && !target.startsWith("manager/src/platform/"),
    planted: {
      file: "manager/src/platform/planted.ts",
      text: 'import { tokenStanding } from "../identity/tokens/standing.ts";',
    },
  },
  {
    rule: "identity/ imports neither provider/ nor any route room: only itself, platform/ and the configuration",
    folder: "manager/src/identity",
    forbidden: (target: string) =>
      target.startsWith("manager/src/") &&
      !target.startsWith("manager/src/identity/") &&
      !target.startsWith("manager/src/platform/") &&
      target !== "manager/src/config.ts",
    planted: {
      file: "manager/src/identity/accounts/planted.ts",
      text: 'import type { IdentityProvider } from "../../provider/index.ts";',
    },
  },
  {
    rule: "identity/ imports no route room (a route calls the domain, never the reverse)",
    folder: "manager/src/identity",
    forbidden: (target: string) =>
      /^manager\/src\/(jobs|workers|enrollment|events|projects|health|metrics|docs|account|management|authentication)\//.test(
        target,
      ),
    planted: {
      file: "manager/src/identity/clients/planted.ts",
      text: 'export { jobsApp } from "../../jobs/index.ts";',
    },
  },
];

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

  for (const { rule, folder, forbidden, planted } of MANAGER_ROOM_RULES) {
    it(rule, async () => {
      expect(await violations([folder], forbidden)).toEqual([]);
    });

    it(`${rule}: a planted import breaks it`, () => {
      const targets = importsIn(planted.file, planted.text);
      expect(targets).toHaveLength(1);
      expect(targets.filter((target) => forbidden(target))).toEqual(targets);
    });
  }
});

const PAGE_FOLDER = "admin/src/page";
/** The longest a function of the console's page may be, in lines from its first to its last. */
const MAX_FUNCTION_LINES = 100;

/** Every function of `text` (as the file `name`) longer than MAX_FUNCTION_LINES, with its line and length. */
function longFunctions(name: string, text: string): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (last - first + 1 > MAX_FUNCTION_LINES)
        found.push(`${name}:${first + 1} has ${last - first + 1} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("the console's page scripts", () => {
  it("type-check as the browser runs them: tsc -p admin/src/page/tsconfig.json finds nothing", async () => {
    const tsc = join(REPOSITORY_ROOT, "node_modules", "typescript", "bin", "tsc");
    const project = join(REPOSITORY_ROOT, PAGE_FOLDER, "tsconfig.json");
    const found = await promisify(execFile)(process.execPath, [tsc, "-p", project], {
      cwd: REPOSITORY_ROOT,
    }).then(
      () => "",
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}`,
    );
    expect(found).toBe("");
  }, 60_000);

  it(`no function of ${PAGE_FOLDER} (scripts and views) is over ${MAX_FUNCTION_LINES} lines`, async () => {
    const entries = await readdir(join(REPOSITORY_ROOT, PAGE_FOLDER));
    const files = entries.filter((name) => /\.(js|ts)$/.test(name) && !name.endsWith(".d.ts"));
    expect(files).toContain("app.js");
    const found: string[] = [];
    for (const name of files) {
      found.push(...longFunctions(name, await readFile(join(REPOSITORY_ROOT, PAGE_FOLDER, name), "utf8")));
    }
    expect(found).toEqual([]);
  });

  it("a planted function one line too long breaks it; one at the limit does not", () => {
    const planted = (name: string, lines: number) =>
      `function ${name}() {\n${Array.from({ length: lines - 2 }, (_, i) => `  step${i}();`).join("\n")}\n}\n`;
    const text = planted("atTheLimit", MAX_FUNCTION_LINES) + planted("tooLong", MAX_FUNCTION_LINES + 1);
    expect(longFunctions("planted.js", text)).toEqual([
      `planted.js:${MAX_FUNCTION_LINES + 1} has ${MAX_FUNCTION_LINES + 1} lines`,
    ]);
  });
});
