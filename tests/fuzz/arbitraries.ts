/**
 * JSON Schema (OpenAPI 3.1) → fast-check arbitrary, for the subset the Manager's document uses.
 * Values it generates are meant to be valid; the fuzzer breaks them on purpose elsewhere. A
 * keyword or format it does not know throws, so a schema that starts using one is noticed here
 * instead of being fuzzed as if the keyword were not there.
 */
import fc from "fast-check";

export type JsonSchema = { [keyword: string]: unknown };

export interface SchemaContext {
  /** `components.schemas` of the document, for `#/components/schemas/<name>` references. */
  components: Record<string, JsonSchema>;
  /**
   * Values worth offering for a property of this name besides the schema's own (ids of objects
   * that exist, a real enrollment token): random ones would almost never reach past a lookup.
   */
  known?: (propertyName: string) => fc.Arbitrary<unknown> | undefined;
}

export class UnsupportedSchemaError extends Error {
  constructor(at: string, what: string) {
    super(`${at}: ${what} (tests/fuzz/arbitraries.ts knows only the subset the document used so far)`);
  }
}

/** Keywords that describe a value without constraining it. */
const ANNOTATIONS = new Set([
  "description",
  "example",
  "examples",
  "default",
  "title",
  "deprecated",
  "readOnly",
  "writeOnly",
  "$comment",
]);

const KEYWORDS_BY_TYPE: Record<string, Set<string>> = {
  string: new Set(["minLength", "maxLength", "pattern", "format"]),
  integer: new Set(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
  number: new Set(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
  boolean: new Set(),
  null: new Set(),
  array: new Set(["items", "minItems", "maxItems"]),
  object: new Set(["properties", "required", "additionalProperties"]),
};
const GENERAL_KEYWORDS = new Set(["type", "nullable", "enum", "const", "$ref", "allOf", "oneOf", "anyOf"]);

/** Arrays and extra properties stay short: the point is variety, not volume (huge bodies are made apart). */
const DEFAULT_MAX_ITEMS = 5;
const DEFAULT_MAX_EXTRA_PROPERTIES = 3;

const REF_PREFIX = "#/components/schemas/";
/** Components whose arbitrary is being built, to refuse recursion. */
const resolving = new Set<string>();

function resolveRef(ref: unknown, context: SchemaContext, at: string): { schema: JsonSchema; name: string } {
  if (typeof ref !== "string" || !ref.startsWith(REF_PREFIX)) {
    throw new UnsupportedSchemaError(at, `$ref ${JSON.stringify(ref)} outside ${REF_PREFIX}`);
  }
  const name = ref.slice(REF_PREFIX.length);
  const schema = context.components[name];
  if (!schema) throw new UnsupportedSchemaError(at, `$ref to a missing component ${name}`);
  return { schema, name };
}

function typesOf(schema: JsonSchema, at: string): string[] | undefined {
  const { type } = schema;
  if (type === undefined) return undefined;
  const types = Array.isArray(type) ? type : [type];
  for (const each of types) {
    if (typeof each !== "string" || !(each in KEYWORDS_BY_TYPE)) {
      throw new UnsupportedSchemaError(at, `type ${JSON.stringify(each)}`);
    }
  }
  return types as string[];
}

function checkKeywords(schema: JsonSchema, at: string): void {
  const types = typesOf(schema, at) ?? Object.keys(KEYWORDS_BY_TYPE);
  for (const keyword of Object.keys(schema)) {
    if (ANNOTATIONS.has(keyword) || GENERAL_KEYWORDS.has(keyword)) continue;
    if (!types.some((type) => KEYWORDS_BY_TYPE[type]?.has(keyword))) {
      throw new UnsupportedSchemaError(at, `keyword "${keyword}"`);
    }
  }
}

/**
 * allOf as one schema: properties and required lists merged, enums intersected, an integer
 * narrowed by a number literal kept an integer, every other keyword equal where both sides have it. That covers a `$ref` narrowed by a description and an object extended
 * by another, which is all the document does with allOf.
 */
function mergeAllOf(parts: unknown[], context: SchemaContext, at: string): JsonSchema {
  const merged: JsonSchema = {};
  parts.forEach((part, index) => {
    const where = `${at}/allOf/${index}`;
    let schema = part as JsonSchema;
    while (typeof schema.$ref === "string") {
      const { $ref, ...rest } = schema;
      schema = { ...resolveRef($ref, context, where).schema, ...rest };
    }
    if (Array.isArray(schema.allOf)) {
      const { allOf, ...rest } = schema;
      schema = { ...mergeAllOf(allOf, context, where), ...rest };
    }
    for (const [keyword, value] of Object.entries(schema)) {
      if (ANNOTATIONS.has(keyword)) continue;
      if (keyword === "properties") {
        const properties = { ...(merged.properties as Record<string, JsonSchema> | undefined) };
        for (const [name, property] of Object.entries(value as Record<string, JsonSchema>)) {
          const existing = properties[name];
          properties[name] = existing ? { allOf: [existing, property] } : property;
        }
        merged.properties = properties;
      } else if (keyword === "required") {
        merged.required = [...new Set([...((merged.required as string[]) ?? []), ...(value as string[])])];
      } else if (keyword === "type" && isIntegerAndNumber(merged.type, value)) {
        // A literal (`number`, enum [400]) narrowing an integer property: both hold integers.
        merged.type = "integer";
      } else if (keyword === "enum" && Array.isArray(merged.enum) && Array.isArray(value)) {
        // Both lists hold: a value must be in each (a narrowed list of error codes, say).
        const allowed = (value as unknown[]).map((item) => JSON.stringify(item));
        merged.enum = (merged.enum as unknown[]).filter((item) => allowed.includes(JSON.stringify(item)));
        if ((merged.enum as unknown[]).length === 0)
          throw new UnsupportedSchemaError(where, "allOf parts share no enum value");
      } else if (keyword in merged && JSON.stringify(merged[keyword]) !== JSON.stringify(value)) {
        throw new UnsupportedSchemaError(where, `allOf parts disagree on "${keyword}"`);
      } else {
        merged[keyword] = value;
      }
    }
  });
  return merged;
}

function isIntegerAndNumber(a: unknown, b: unknown): boolean {
  return (a === "integer" && b === "number") || (a === "number" && b === "integer");
}

const numberOr = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);

function stringArbitrary(schema: JsonSchema, at: string): fc.Arbitrary<string> {
  const minLength = numberOr(schema.minLength) ?? 0;
  const maxLength = numberOr(schema.maxLength);
  const fitsLength = (value: string) =>
    value.length >= minLength && (maxLength === undefined || value.length <= maxLength);
  if (schema.format !== undefined) {
    const formats: Record<string, fc.Arbitrary<string>> = {
      uuid: fc.uuid(),
      "date-time": fc
        .date({
          min: new Date("1970-01-01T00:00:00Z"),
          max: new Date("2999-12-31T23:59:59Z"),
          noInvalidDate: true,
        })
        .map((date) => date.toISOString()),
      uri: fc.webUrl(),
    };
    const byFormat = formats[schema.format as string];
    if (!byFormat) throw new UnsupportedSchemaError(at, `format "${String(schema.format)}"`);
    if (schema.pattern !== undefined) throw new UnsupportedSchemaError(at, "format together with pattern");
    return byFormat.filter(fitsLength);
  }
  if (typeof schema.pattern === "string") {
    // A longer size lets `+` and `*` reach a minimum length without rejecting most samples.
    const size = minLength > 8 ? "medium" : undefined;
    return fc.stringMatching(new RegExp(schema.pattern, "u"), { size }).filter(fitsLength);
  }
  // Generated by code points, as JSON Schema counts length; fitsLength counts UTF-16 units, as zod does.
  return fc
    .string({ unit: "binary", minLength, maxLength: maxLength ?? Math.max(minLength, 32) })
    .filter(fitsLength);
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const exclusiveMin = numberOr(schema.exclusiveMinimum);
  const exclusiveMax = numberOr(schema.exclusiveMaximum);
  if (integer) {
    const min = numberOr(schema.minimum) ?? (exclusiveMin === undefined ? undefined : exclusiveMin + 1);
    const max = numberOr(schema.maximum) ?? (exclusiveMax === undefined ? undefined : exclusiveMax - 1);
    return fc.integer({
      min: min === undefined ? undefined : Math.ceil(min),
      max: max === undefined ? undefined : Math.floor(max),
    });
  }
  return fc.double({
    min: numberOr(schema.minimum) ?? exclusiveMin,
    max: numberOr(schema.maximum) ?? exclusiveMax,
    minExcluded: exclusiveMin !== undefined,
    maxExcluded: exclusiveMax !== undefined,
    noNaN: true,
    noDefaultInfinity: true,
  });
}

function objectArbitrary(schema: JsonSchema, context: SchemaContext, at: string): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema.required ?? []) as string[];
  for (const name of required) {
    if (!(name in properties))
      throw new UnsupportedSchemaError(at, `required "${name}" has no property schema`);
  }
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) {
    const own = schemaArbitrary(property, context, `${at}/properties/${name}`);
    const known = context.known?.(name);
    model[name] = known ? fc.oneof(known, own) : own;
  }
  const declared = fc.record(model, { requiredKeys: required });
  const { additionalProperties } = schema;
  // Absent, true or false: the declared properties only (the fuzzer's mutations add others).
  if (additionalProperties === undefined || additionalProperties === true || additionalProperties === false) {
    return declared;
  }
  if (typeof additionalProperties !== "object" || additionalProperties === null) {
    throw new UnsupportedSchemaError(at, `additionalProperties ${JSON.stringify(additionalProperties)}`);
  }
  const extraKey = fc
    .string({ minLength: 1, maxLength: 16 })
    .filter((key) => key !== "__proto__" && !Object.hasOwn(properties, key));
  const extra = fc.dictionary(
    extraKey,
    schemaArbitrary(additionalProperties as JsonSchema, context, `${at}/additionalProperties`),
    { maxKeys: DEFAULT_MAX_EXTRA_PROPERTIES },
  );
  return fc.tuple(extra, declared).map(([more, own]) => ({ ...more, ...(own as object) }));
}

function arbitraryOfType(
  type: string,
  schema: JsonSchema,
  context: SchemaContext,
  at: string,
): fc.Arbitrary<unknown> {
  switch (type) {
    case "string":
      return stringArbitrary(schema, at);
    case "integer":
      return numberArbitrary(schema, true);
    case "number":
      return numberArbitrary(schema, false);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      if (schema.items === undefined) throw new UnsupportedSchemaError(at, "array without items");
      const minLength = numberOr(schema.minItems) ?? 0;
      const maxLength = Math.max(
        minLength,
        Math.min(numberOr(schema.maxItems) ?? DEFAULT_MAX_ITEMS, DEFAULT_MAX_ITEMS),
      );
      return fc.array(schemaArbitrary(schema.items as JsonSchema, context, `${at}/items`), {
        minLength,
        maxLength,
      });
    }
    case "object":
      return objectArbitrary(schema, context, at);
    default:
      throw new UnsupportedSchemaError(at, `type "${type}"`);
  }
}

/** An arbitrary of values valid against `schema` (fails loudly on any keyword outside the subset). */
export function schemaArbitrary(schema: JsonSchema, context: SchemaContext, at = "#"): fc.Arbitrary<unknown> {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new UnsupportedSchemaError(at, `schema ${JSON.stringify(schema)}`);
  }
  checkKeywords(schema, at);
  const { nullable, ...rest } = schema;
  if (nullable === true) return fc.oneof(fc.constant(null), schemaArbitrary(rest, context, at));
  if (schema.$ref !== undefined) {
    const { $ref, ...siblings } = schema;
    const constraining = Object.keys(siblings).filter((keyword) => !ANNOTATIONS.has(keyword));
    if (constraining.length > 0)
      return schemaArbitrary(mergeAllOf([{ $ref }, siblings], context, at), context, at);
    const { schema: target, name } = resolveRef($ref, context, at);
    // Arbitraries are built eagerly, so a schema that refers to itself would never finish.
    if (resolving.has(name)) throw new UnsupportedSchemaError(at, `a recursive $ref to ${name}`);
    resolving.add(name);
    try {
      return schemaArbitrary(target, context, `${REF_PREFIX}${name}`);
    } finally {
      resolving.delete(name);
    }
  }
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...siblings } = schema;
    return schemaArbitrary(mergeAllOf([...allOf, siblings], context, at), context, at);
  }
  for (const keyword of ["oneOf", "anyOf"] as const) {
    const branches = schema[keyword];
    if (branches === undefined) continue;
    if (!Array.isArray(branches) || Object.keys(schema).some((k) => k !== keyword && !ANNOTATIONS.has(k))) {
      throw new UnsupportedSchemaError(at, `${keyword} with sibling constraints`);
    }
    return fc.oneof(
      ...branches.map((branch, index) =>
        schemaArbitrary(branch as JsonSchema, context, `${at}/${keyword}/${index}`),
      ),
    );
  }
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) {
    if (schema.enum.length === 0) throw new UnsupportedSchemaError(at, "an empty enum");
    return fc.constantFrom(...schema.enum);
  }
  const types = typesOf(schema, at);
  if (types === undefined) {
    const constraining = Object.keys(schema).filter((keyword) => !ANNOTATIONS.has(keyword));
    if (constraining.length > 0)
      throw new UnsupportedSchemaError(at, `no type but ${constraining.join(", ")}`);
    return fc.jsonValue();
  }
  return fc.oneof(...types.map((type) => arbitraryOfType(type, schema, context, at)));
}
