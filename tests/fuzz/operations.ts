/**
 * The operations of an OpenAPI document, as the fuzzer needs them: method, path, parameters,
 * request body, responses and the security schemes they require. A part of the document the
 * fuzzer does not handle yet (a cookie parameter, a path-item keyword) fails loudly.
 */
import type { JsonSchema } from "./arbitraries.ts";

export interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: JsonSchema;
  style?: string;
  explode?: boolean;
  /** Of the parameter, else of its schema. */
  example?: unknown;
}

export interface MediaType {
  schema?: JsonSchema;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}

export interface Operation {
  /** "GET /api/v1/operations/jobs/{jobId}" */
  label: string;
  method: string;
  path: string;
  parameters: Parameter[];
  requestBody?: { required: boolean; content: Record<string, MediaType> };
  /** By status ("200", "default"). */
  responses: Record<string, { content?: Record<string, MediaType> }>;
  /** Names of the schemes of its security requirements; empty for a route without security. */
  security: string[];
  /** JSON pointer of the operation in the document, for validators of its responses. */
  pointer: string;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const PATH_ITEM_KEYS = new Set([...METHODS, "parameters", "summary", "description", "servers"]);
const PARAMETER_KEYS = new Set([
  "name",
  "in",
  "required",
  "schema",
  "style",
  "explode",
  "description",
  "example",
]);

/** A JSON pointer segment (RFC 6901). */
export const pointerEscape = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1");

function parameterOf(raw: Record<string, unknown>, document: OpenApiDocument, at: string): Parameter {
  if (typeof raw.$ref === "string") {
    const name = raw.$ref.replace("#/components/parameters/", "");
    const target = document.components?.parameters?.[name];
    if (!target) throw new Error(`${at}: unresolvable parameter ${raw.$ref}`);
    return parameterOf(target, document, at);
  }
  for (const key of Object.keys(raw)) {
    if (!PARAMETER_KEYS.has(key)) throw new Error(`${at}: parameter keyword "${key}" is not fuzzed yet`);
  }
  if (raw.in !== "path" && raw.in !== "query" && raw.in !== "header") {
    throw new Error(`${at}: parameters in ${String(raw.in)} are not fuzzed yet`);
  }
  return {
    name: raw.name as string,
    in: raw.in,
    required: raw.required === true,
    schema: raw.schema as JsonSchema,
    style: raw.style as string | undefined,
    explode: raw.explode as boolean | undefined,
    example: raw.example ?? (raw.schema as JsonSchema | undefined)?.example,
  };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
  components?: {
    schemas?: Record<string, JsonSchema>;
    parameters?: Record<string, Record<string, unknown>>;
    securitySchemes?: Record<string, unknown>;
  };
  security?: Record<string, string[]>[];
}

/** Every operation of the document, path-level parameters included. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const key of Object.keys(item)) {
      if (!PATH_ITEM_KEYS.has(key)) throw new Error(`${path}: path item keyword "${key}" is not fuzzed yet`);
    }
    const shared = ((item.parameters ?? []) as Record<string, unknown>[]).map((raw) =>
      parameterOf(raw, document, path),
    );
    for (const method of METHODS) {
      const operation = item[method] as Record<string, unknown> | undefined;
      if (!operation) continue;
      const label = `${method.toUpperCase()} ${path}`;
      const own = ((operation.parameters ?? []) as Record<string, unknown>[]).map((raw) =>
        parameterOf(raw, document, label),
      );
      const parameters = [
        ...shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)),
        ...own,
      ];
      const requirements = (operation.security ?? document.security ?? []) as Record<string, string[]>[];
      operations.push({
        label,
        method: method.toUpperCase(),
        path,
        parameters,
        requestBody: operation.requestBody as Operation["requestBody"],
        responses: operation.responses as Operation["responses"],
        security: [...new Set(requirements.flatMap((requirement) => Object.keys(requirement)))],
        pointer: `/paths/${pointerEscape(path)}/${method}`,
      });
    }
  }
  return operations;
}
