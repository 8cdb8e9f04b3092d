import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseEnvironment } from "./environment.ts";

const schema = z
  .object({ URL: z.url(), PORT: z.coerce.number().int().default(8080), KEY: z.string().min(4) })
  .superRefine((config, context) => {
    if (config.KEY === "nope") context.addIssue({ code: "custom", path: ["KEY"], message: "is refused" });
  });

describe("parseEnvironment", () => {
  it("fills defaults and treats empty values as unset", () => {
    expect(parseEnvironment(schema, { URL: "https://a.example", PORT: "", KEY: "long enough" })).toEqual({
      ok: true,
      config: { URL: "https://a.example", PORT: 8080, KEY: "long enough" },
    });
  });

  it("lists every problem by variable name, missing ones as not set", () => {
    expect(parseEnvironment(schema, { PORT: "x", KEY: "" })).toEqual({
      ok: false,
      problems: ["URL: required but not set", expect.stringMatching(/^PORT: /), "KEY: required but not set"],
    });
  });

  it("reports a refinement's message under its variable", () => {
    expect(parseEnvironment(schema, { URL: "https://a.example", KEY: "nope" })).toEqual({
      ok: false,
      problems: ["KEY: is refused"],
    });
  });
});
