/**
 * The OpenAPI document as other tools take it. Every operation carries what generators and
 * linters need (a stable camelCase operationId, a summary, a tag, a 4XX answer, a security entry),
 * and a second generator, independent of the SDK's openapi-typescript, builds a client from it
 * (@hey-api/openapi-ts): a call of each operation, with the document's own examples as arguments,
 * must type-check against that client. Redocly's lint runs in .ci/run.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createClient } from "@hey-api/openapi-ts";
import { REPOSITORY_ROOT } from "@tjm/devstack/manager-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);

type Json = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  operation: Json;
}

/** Routes that take no token: the probes, the Worker-facing routes (they prove an NKey instead), recovery. */
const PUBLIC_PATHS = [/^\/api\/health\//, /^\/api\/v1\/worker\//, /^\/api\/v1\/authentication\/recovery\//];
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"];

let documentText: string;
let document: Json;
let operations: Operation[];

beforeAll(async () => {
  documentText = await readFile(join(REPOSITORY_ROOT, "openapi", "openapi.json"), "utf8");
  document = JSON.parse(documentText) as Json;
  operations = Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(
    ([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, operation]) => ({ method, path, operation })),
  );
});

describe("the OpenAPI document's metadata", () => {
  it("names a server, a license and a contact", () => {
    const info = document.info as Json;
    expect(document.servers).toEqual([
      expect.objectContaining({ url: expect.stringMatching(/^https?:\/\//) }),
    ]);
    expect(info.license).toMatchObject({ name: "Apache-2.0" });
    expect(info.contact).toMatchObject({ name: expect.any(String) });
  });

  it("gives every operation a unique camelCase operationId, a summary, a tag and a 4XX answer", () => {
    const problems = operations.flatMap(({ method, path, operation }) => {
      const where = `${method.toUpperCase()} ${path}`;
      const found: string[] = [];
      if (typeof operation.operationId !== "string" || !/^[a-z][a-zA-Z0-9]*$/.test(operation.operationId))
        found.push(`${where}: operationId ${String(operation.operationId)} is not camelCase`);
      if (typeof operation.summary !== "string" || operation.summary === "")
        found.push(`${where}: no summary`);
      if (!Array.isArray(operation.tags) || operation.tags.length === 0) found.push(`${where}: no tag`);
      if (!Object.keys(operation.responses as Json).some((status) => /^4(\d\d|XX)$/.test(status)))
        found.push(`${where}: no 4XX response`);
      return found;
    });
    expect(problems).toEqual([]);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("states the security of every operation: [] exactly for the public routes", () => {
    const problems = operations.flatMap(({ method, path, operation }) => {
      const isPublic = PUBLIC_PATHS.some((pattern) => pattern.test(path));
      const security = operation.security;
      if (!Array.isArray(security)) return [`${method.toUpperCase()} ${path}: no security entry`];
      if (isPublic !== (security.length === 0))
        return [`${method.toUpperCase()} ${path}: security ${JSON.stringify(security)}`];
      return [];
    });
    expect(problems).toEqual([]);
  });
});

/** The document's example for `schema`: its own, its component's, or one built from its properties' examples. */
function exampleOf(schema: Json | undefined): unknown {
  if (schema === undefined) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/components/schemas/", "");
    return exampleOf(((document.components as Json).schemas as Record<string, Json>)[name]);
  }
  if (schema.properties !== undefined) {
    const entries = Object.entries(schema.properties as Record<string, Json>)
      .map(([name, property]) => [name, exampleOf(property)] as const)
      .filter(([, value]) => value !== undefined);
    return Object.fromEntries(entries);
  }
  if (schema.type === "array") return [exampleOf(schema.items as Json)].filter((item) => item !== undefined);
  if (schema.default !== undefined) return schema.default;
  return undefined;
}

/** One typed call of `operationId` with the document's examples for its path parameters and body. */
function callOf({ operation }: Operation): string {
  const parameters = (operation.parameters ?? []) as Json[];
  const path = Object.fromEntries(
    parameters
      .filter((parameter) => parameter.in === "path")
      .map((parameter) => [parameter.name, parameter.example ?? exampleOf(parameter.schema as Json)]),
  );
  const requestBody = operation.requestBody as Json | undefined;
  const content = (requestBody?.content as Record<string, Json> | undefined)?.["application/json"];
  const body = content === undefined ? undefined : (content.example ?? exampleOf(content.schema as Json));
  const id = operation.operationId as string;
  const pathArgument = Object.keys(path).length > 0 ? `, path: ${JSON.stringify(path)}` : "";
  const bodyArgument = body === undefined ? "" : `, body: ${JSON.stringify(body)}`;
  return `export const ${id}Call = () => sdk.${id}({ client${pathArgument}${bodyArgument} });`;
}

describe("a client generated by @hey-api/openapi-ts", () => {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "tjm-hey-api-"));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("type-checks a call of each operation, made with the document's examples", async () => {
    const output = join(directory, "client");
    await createClient({
      input: join(REPOSITORY_ROOT, "openapi", "openapi.json"),
      // Its imports are extensionless by default, which strict ESM resolution refuses.
      output: { path: output, importFileExtension: ".ts" },
      plugins: ["@hey-api/client-fetch", "@hey-api/typescript", "@hey-api/sdk"],
      logs: { level: "silent" },
    });
    const calls = [
      'import { createClient } from "./client/client/index.ts";',
      'import * as sdk from "./client/sdk.gen.ts";',
      "",
      'const client = createClient({ baseUrl: "http://127.0.0.1:8080" });',
      ...operations.map(callOf),
      "",
    ].join("\n");
    await writeFile(join(directory, "calls.ts"), calls);
    await writeFile(
      join(directory, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "ES2022",
          lib: ["ES2022", "DOM", "DOM.Iterable"],
          module: "NodeNext",
          moduleResolution: "NodeNext",
          allowImportingTsExtensions: true,
          skipLibCheck: true,
          types: [],
        },
        files: ["calls.ts"],
      }),
    );
    const tsc = join(REPOSITORY_ROOT, "node_modules", "typescript", "bin", "tsc");
    const checked = await run(process.execPath, [tsc, "-p", directory], { cwd: directory }).then(
      () => "",
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}`,
    );
    expect(checked, calls).toBe("");
    for (const { operation } of operations)
      expect(calls).toContain(`sdk.${operation.operationId as string}(`);
  }, 120_000);
});
