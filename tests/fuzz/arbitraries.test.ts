/**
 * The JSON Schema → fast-check converter the route fuzzer builds its requests with: what it
 * generates is valid against the schema (checked by ajv, as the fuzzer checks responses), and
 * a keyword or format outside the subset it knows fails loudly.
 */
import { readFile } from "node:fs/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type JsonSchema, schemaArbitrary, UnsupportedSchemaError } from "./arbitraries.ts";
import { ResponseValidators } from "./invariants.ts";
import type { OpenApiDocument } from "./operations.ts";

// The committed copy of the document: this checks the converter, not the Manager.
const document = JSON.parse(
  await readFile(new URL("../../openapi/openapi.json", import.meta.url), "utf8"),
) as OpenApiDocument;
const components = document.components?.schemas ?? {};
const validators = new ResponseValidators(document);

describe("values generated from a schema", () => {
  it.each(Object.keys(components))("are valid against the component %s", (name) => {
    const validate = validators.validator(`/components/schemas/${name}`);
    fc.assert(
      fc.property(schemaArbitrary({ $ref: `#/components/schemas/${name}` }, { components }), (value) => {
        expect(validate(value), validators.errorsText(validate)).toBe(true);
      }),
      { numRuns: 50 },
    );
  });

  it("include the known values offered for a property of that name", () => {
    const schema = {
      type: "object",
      properties: { jobId: { type: "string", format: "uuid" } },
      required: ["jobId"],
    };
    const jobId = "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d";
    const values = fc.sample(
      schemaArbitrary(schema, {
        components,
        known: (name) => (name === "jobId" ? fc.constant(jobId) : undefined),
      }),
      200,
    ) as { jobId: string }[];
    expect(values.some((value) => value.jobId === jobId)).toBe(true);
    expect(values.some((value) => value.jobId !== jobId)).toBe(true);
  });

  it("honour nullable, const, anyOf and additionalProperties schemas", () => {
    const schema = {
      type: "object",
      properties: {
        maybe: { type: "integer", minimum: 1, maximum: 3, nullable: true },
        fixed: { const: "v1" },
        either: { anyOf: [{ type: "boolean" }, { type: "string", enum: ["a"] }] },
        map: { type: "object", additionalProperties: { type: "number", minimum: 0, exclusiveMaximum: 1 } },
      },
      required: ["maybe", "fixed", "either", "map"],
    };
    for (const value of fc.sample(schemaArbitrary(schema, { components }), 200) as Record<
      string,
      unknown
    >[]) {
      expect(value.maybe === null || [1, 2, 3].includes(value.maybe as number)).toBe(true);
      expect(value.fixed).toBe("v1");
      expect(value.either === "a" || typeof value.either === "boolean").toBe(true);
      for (const number of Object.values(value.map as Record<string, number>)) {
        expect(number >= 0 && number < 1).toBe(true);
      }
    }
  });
});

describe("a schema outside the known subset", () => {
  it.each<[string, JsonSchema]>([
    ["an unknown keyword", { type: "string", contentEncoding: "base64" }],
    ["a keyword of another type", { type: "integer", maxLength: 3 }],
    ["an unknown format", { type: "string", format: "email" }],
    ["an unknown type", { type: "file" }],
    ["a $ref outside the components", { $ref: "https://example.com/schema.json" }],
    ["a $ref to a missing component", { $ref: "#/components/schemas/Nowhere" }],
    ["an allOf whose parts disagree", { allOf: [{ type: "string" }, { type: "integer" }] }],
    ["a keyword deep inside", { type: "array", items: { type: "object", patternProperties: {} } }],
    ["a recursive $ref", { $ref: "#/components/schemas/Tree" }],
  ])("fails loudly: %s", (_, schema) => {
    const tree = { type: "array", items: { $ref: "#/components/schemas/Tree" } };
    expect(() => schemaArbitrary(schema, { components: { ...components, Tree: tree } })).toThrow(
      UnsupportedSchemaError,
    );
  });
});
