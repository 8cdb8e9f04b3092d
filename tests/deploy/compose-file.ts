/**
 * compose.yaml as Compose reads it, without Docker: YAML with anchors and merge keys resolved,
 * `${VARIABLE}` interpolation (the forms the Compose Specification defines), and the env file's
 * entries. Only what tests/deploy/ checks; no defaults Compose would add are invented here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

export interface Service {
  image?: string;
  build?: { context: string; dockerfile?: string; target?: string } | string;
  entrypoint?: string[] | string;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  volumes?: string[];
  configs?: { source: string; target: string }[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string; timeout?: string; retries?: number };
  deploy?: {
    replicas?: number;
    resources?: {
      reservations?: { devices?: { driver?: string; count?: string | number; capabilities: string[] }[] };
    };
  };
  profiles?: string[];
  ports?: string[];
  network_mode?: string;
  restart?: string;
}

export interface ComposeFile {
  name?: string;
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
  configs?: Record<string, { file: string }>;
  [extension: `x-${string}`]: unknown;
}

export function readCompose(root: string): { text: string; document: ComposeFile } {
  const text = readFileSync(join(root, "compose.yaml"), "utf8");
  // Merge keys (`<<: *anchor`) as Compose resolves them.
  return { text, document: parse(text, { merge: true }) as ComposeFile };
}

/** KEY=VALUE lines of an env file; comments and blank lines skipped, values unquoted as written. */
export function readEnvFile(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) entries.set(match[1] as string, (match[2] as string).trim());
  }
  return entries;
}

const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** Every variable name a text interpolates. */
export function referencedVariables(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(REFERENCE)) {
    const name = match[1] ?? match[4];
    if (name !== undefined) names.add(name);
  }
  return names;
}

export interface Interpolation<T> {
  value: T;
  /** `${NAME:?message}` (or `?`) whose variable was unset (or empty): Compose stops with the message. */
  errors: { name: string; message: string }[];
}

function interpolateString(text: string, env: Map<string, string>, errors: Interpolation<unknown>["errors"]) {
  return text.replace(
    REFERENCE,
    (whole, braced?: string, operator?: string, argument?: string, bare?: string) => {
      if (whole === "$$") return "$";
      const name = (braced ?? bare) as string;
      const value = env.get(name);
      const unsetOrEmpty = value === undefined || value === "";
      switch (operator) {
        case ":-":
          return unsetOrEmpty ? (argument ?? "") : value;
        case "-":
          return value === undefined ? (argument ?? "") : value;
        case ":?":
        case "?":
          if (operator === ":?" ? unsetOrEmpty : value === undefined) {
            errors.push({ name, message: argument ?? "" });
            return "";
          }
          return value as string;
        default:
          return value ?? "";
      }
    },
  );
}

/** The document with every string interpolated from `env`, as Compose does before anything else. */
export function interpolate<T>(value: T, env: Map<string, string>): Interpolation<T> {
  const errors: Interpolation<unknown>["errors"] = [];
  const walk = (node: unknown): unknown => {
    if (typeof node === "string") return interpolateString(node, env, errors);
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === "object")
      return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, walk(child)]));
    return node;
  };
  return { value: walk(value) as T, errors };
}

/** An exec-form list (a string form is split on spaces, as the checks here only need its words). */
export function words(value: string[] | string | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : value.split(/\s+/).filter((word) => word !== "");
}

/** `source:target[:mode]` of a volume entry. */
export function volumeMount(entry: string): { source: string; target: string; readOnly: boolean } {
  const [source = "", target = "", mode] = entry.split(":");
  return { source, target, readOnly: mode === "ro" };
}
