/**
 * Request bodies: valid from the schema or a documented example, mutated (a property removed,
 * retyped, added or wrapped in an array), any JSON, not JSON at all, JSON labelled as another
 * content type, none, or padded with one long string to just under, at and past the body limit.
 */
import fc from "fast-check";
import { type SchemaContext, schemaArbitrary } from "./arbitraries.ts";
import { anyJson, hostileText } from "./hostile-values.ts";
import type { MediaType, Operation } from "./operations.ts";

type Json = unknown;
type Path = (string | number)[];

export type BodyChoice =
  | { kind: "none" }
  /** JSON, optionally padded with one long string to exactly `padToBytes` (near and past the limit). */
  | { kind: "json"; value: Json; padToBytes?: number; padPick?: number }
  /** Sent as it is: not JSON, or JSON declared as another content type (null: no content type). */
  | { kind: "raw"; contentType: string | null; text: string };

type Mutation =
  | { kind: "delete"; pick: number }
  | { kind: "replace"; pick: number; value: Json }
  | { kind: "wrap-in-array"; pick: number }
  | { kind: "add-property"; pick: number; key: string; value: Json };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("replace" as const), pick: fc.nat(), value: anyJson }),
  fc.record({ kind: fc.constant("wrap-in-array" as const), pick: fc.nat() }),
  fc.record({
    kind: fc.constant("add-property" as const),
    pick: fc.nat(),
    key: fc.oneof(fc.constantFrom("__proto__", "constructor", "extra", ""), hostileText),
    value: anyJson,
  }),
);

const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function pathsOf(value: Json, at: Path = []): Path[] {
  const children: [string | number, Json][] = Array.isArray(value)
    ? value.map((child, index) => [index, child])
    : isObject(value)
      ? Object.entries(value)
      : [];
  return [at, ...children.flatMap(([key, child]) => pathsOf(child, [...at, key]))];
}

function valueAt(root: Json, path: Path): Json {
  return path.reduce<Json>((value, key) => (value as Record<string | number, Json>)[key], root);
}

/** A copy of `root` with the value at `path` replaced (or, with `undefined`, removed). */
function withValueAt(root: Json, path: Path, value: Json | undefined): Json {
  if (path.length === 0) return value ?? null;
  const copy = structuredClone(root);
  const parent = valueAt(copy, path.slice(0, -1)) as Record<string | number, Json> & Json[];
  const key = path[path.length - 1] as string | number;
  if (value !== undefined) parent[key] = value;
  else if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key];
  return copy;
}

function applyMutation(root: Json, change: Mutation): Json {
  const all = pathsOf(root);
  const chosen = (paths: Path[]) => paths[change.pick % paths.length];
  switch (change.kind) {
    case "delete": {
      const path = chosen(all.filter((candidate) => candidate.length > 0));
      return path ? withValueAt(root, path, undefined) : root;
    }
    case "replace":
      return withValueAt(root, chosen(all) ?? [], structuredClone(change.value));
    case "wrap-in-array": {
      const path = chosen(all) ?? [];
      return withValueAt(root, path, [valueAt(root, path)]);
    }
    case "add-property": {
      const path = chosen(all.filter((candidate) => isObject(valueAt(root, candidate))));
      if (!path) return root;
      const copy = structuredClone(root);
      // defineProperty, so "__proto__" becomes an own key as JSON.parse on the server makes it.
      Object.defineProperty(valueAt(copy, path), change.key, {
        value: structuredClone(change.value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return copy;
    }
  }
}

/** Where to put the padding: one of the body's strings, or a new property when it has none. */
function padded(value: Json, bytes: number, pick: number): string {
  const strings = pathsOf(value).filter((path) => typeof valueAt(value, path) === "string");
  const target = strings.length > 0 ? (strings[pick % strings.length] as Path) : undefined;
  const base = target
    ? withValueAt(value, target, "")
    : isObject(value)
      ? { ...value, padding: "" }
      : { padding: "" };
  const room = Math.max(0, bytes - new TextEncoder().encode(JSON.stringify(base)).length);
  return JSON.stringify(withValueAt(base, target ?? ["padding"], "x".repeat(room)));
}

const OTHER_CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/json-patch+json",
  "application/jsonx",
];

const notJson = fc.oneof(
  hostileText,
  fc.constantFrom("{", "[", '{"a":', "{'a':1}", "NaN", "undefined", "\u0000", '{"a":1}{"b":2}', "[]]"),
);

export function bodyChoice(
  operation: Operation,
  context: SchemaContext,
  bodyLimit: number,
): fc.Arbitrary<BodyChoice> {
  const json = operation.requestBody?.content["application/json"];
  const otherTypes = Object.keys(operation.requestBody?.content ?? {}).filter(
    (type) => type !== "application/json",
  );
  if (otherTypes.length > 0)
    throw new Error(`${operation.label}: request bodies of ${otherTypes.join(", ")} are not fuzzed yet`);
  const sizes = fc.oneof(
    fc.constantFrom(bodyLimit - 1, bodyLimit, bodyLimit + 1),
    fc.integer({ min: Math.floor(bodyLimit / 2), max: bodyLimit + 4096 }),
  );
  const anyBody = fc.oneof(
    anyJson.map((value): BodyChoice => ({ kind: "json", value })),
    notJson.map((text): BodyChoice => ({ kind: "raw", contentType: "application/json", text })),
  );
  if (!json?.schema) {
    // fetch sends no body with GET or HEAD.
    if (operation.method === "GET" || operation.method === "HEAD") return fc.constant({ kind: "none" });
    return fc.oneof(
      { weight: 6, arbitrary: fc.constant<BodyChoice>({ kind: "none" }) },
      { weight: 1, arbitrary: anyBody },
    );
  }
  const fromSchema = schemaArbitrary(json.schema, context, `${operation.label} request body`);
  const examples = examplesOf(json, context);
  // A documented example passes the checks a schema cannot state (a plan's codec fits its
  // container), so its mutations reach the deepest validation; the schema gives the variety.
  const valid =
    examples.length === 0
      ? fromSchema
      : fc.oneof(
          fc.constantFrom(...examples).chain((example) => withKnownValues(example, context)),
          fromSchema,
        );
  const mutated = fc
    .tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 3 }))
    .map(([value, changes]) => changes.reduce(applyMutation, value));
  return fc.oneof(
    { weight: 4, arbitrary: valid.map((value): BodyChoice => ({ kind: "json", value })) },
    { weight: 4, arbitrary: mutated.map((value): BodyChoice => ({ kind: "json", value })) },
    { weight: 1, arbitrary: anyBody },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.constantFrom<string | null>(...OTHER_CONTENT_TYPES, null))
        .map(
          ([value, contentType]): BodyChoice => ({ kind: "raw", contentType, text: JSON.stringify(value) }),
        ),
    },
    { weight: 1, arbitrary: fc.constant<BodyChoice>({ kind: "none" }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, sizes, fc.nat())
        .map(([value, padToBytes, padPick]): BodyChoice => ({ kind: "json", value, padToBytes, padPick })),
    },
  );
}

/** The documented examples of a body: of its media type, else of its schema (through a `$ref`). */
function examplesOf(mediaType: MediaType, context: SchemaContext): unknown[] {
  const own = [
    ...(mediaType.example === undefined ? [] : [mediaType.example]),
    ...Object.values(mediaType.examples ?? {}).flatMap((example) =>
      example.value === undefined ? [] : [example.value],
    ),
  ];
  if (own.length > 0) return own;
  let schema = mediaType.schema;
  if (typeof schema?.$ref === "string")
    schema = context.components[schema.$ref.replace("#/components/schemas/", "")];
  return schema?.example === undefined ? [] : [schema.example];
}

/** `value` with some of its properties that have known values (ids that exist) set to one. */
function withKnownValues(value: Json, context: SchemaContext): fc.Arbitrary<Json> {
  const replaceable = pathsOf(value).flatMap((path) => {
    const name = path[path.length - 1];
    const known = typeof name === "string" ? context.known?.(name) : undefined;
    return known ? [{ path, known }] : [];
  });
  return fc
    .tuple(...replaceable.map(({ known }) => fc.option(known, { freq: 4, nil: undefined })))
    .map((choices) =>
      choices.reduce<Json>((result, choice, index) => {
        const target = replaceable[index];
        return choice === undefined || !target ? result : withValueAt(result, target.path, choice);
      }, value),
    );
}

/** The body as sent: its content type (null: none) and text, padding included. */
export function bodyText(body: BodyChoice): { contentType: string | null; text: string } | undefined {
  switch (body.kind) {
    case "none":
      return undefined;
    case "json":
      return {
        contentType: "application/json",
        text:
          body.padToBytes === undefined
            ? (JSON.stringify(body.value) ?? "null")
            : padded(body.value, body.padToBytes, body.padPick ?? 0),
      };
    case "raw":
      return { contentType: body.contentType, text: body.text };
  }
}
