import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseEnvironment, redactEnvironment, secret, urlWithSecretPassword } from "./environment.ts";

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

describe("redactEnvironment", () => {
  const marked = z.object({
    TOKEN: secret(z.string()).optional(),
    KEY: secret(z.string().optional()),
    SERVERS: urlWithSecretPassword(z.string().transform((value) => value.split(","))),
    DATABASE_URL: urlWithSecretPassword(z.url()).default("postgres://db/tjm"),
    NAME: z.string(),
  });

  it("masks what the schema marks, through the wrappers added around the mark", () => {
    const config = marked.parse({
      TOKEN: "token-value",
      SERVERS: "nats://a:4222,nats://user:pw@b:4222",
      DATABASE_URL: "postgres://tjm:pw@db/tjm",
      NAME: "visible",
    });
    expect(redactEnvironment(marked, config)).toEqual({
      TOKEN: "***",
      SERVERS: ["nats://a:4222", "nats://user:***@b:4222"],
      DATABASE_URL: "postgres://tjm:***@db/tjm",
      NAME: "visible",
    });
  });

  it("leaves an unset secret unset", () => {
    const config = marked.parse({ SERVERS: "nats://a:4222", NAME: "n" });
    expect(redactEnvironment(marked, config)).not.toHaveProperty("TOKEN");
    expect(redactEnvironment(marked, config)).not.toHaveProperty("KEY");
  });
});
