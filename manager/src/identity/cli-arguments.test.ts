import { describe, expect, it } from "vitest";
import {
  normalizeEmail,
  parseAccountsCreate,
  parseAccountsDisable,
  parseClientsCreate,
  parseOptions,
  redirectUriProblem,
} from "./cli-arguments.ts";

describe("redirect URIs", () => {
  it.each([
    "https://app.example.com/callback",
    "https://app.example.com:8443/cb?tenant=a",
    "http://localhost:3000/cb",
    "http://127.0.0.1:8765/cb",
    "http://[::1]:8765/cb",
  ])("accepts %s", (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  it.each([
    ["http://app.example.com/cb", "must use https"],
    ["http://10.0.0.1/cb", "must use https"],
    ["http://localhost.example.com/cb", "must use https"],
    ["myapp://cb", "must use https"],
    ["https://app.example.com/cb#", "has a fragment"],
    ["app.example.com/cb", "is not an absolute URL"],
    ["https://ops@app.example.com/cb", "must not have userinfo"],
    ["https://*.example.com/cb", "must not have a *"],
    ["https:/app.example.com/cb", "is read by URL parsers as 'https://app.example.com/cb'"],
  ])("refuses %s: %s", (uri, problem) => {
    expect(redirectUriProblem(uri)).toContain(problem);
  });
});

describe("e-mail addresses", () => {
  it("trims and lowercases the domain only", () => {
    expect(normalizeEmail("  Ada.Lovelace+TJM@Example.COM\n")).toBe("Ada.Lovelace+TJM@example.com");
  });

  it.each(["no-at-sign", "@example.com", "ada@", "ada lovelace@example.com"])("refuses %j", (email) => {
    expect(normalizeEmail(email)).toBeUndefined();
  });
});

describe("--email of accounts create and accounts disable", () => {
  const parsers = [
    ["accounts create", parseAccountsCreate],
    ["accounts disable", parseAccountsDisable],
  ] as const;
  const atBound = `${"a".repeat(254 - "@example.com".length)}@example.com`;

  it.each(parsers)("%s accepts an address of 254 characters", (_, parse) => {
    expect(parse(["--email", atBound])).toMatchObject({ ok: true, value: { email: atBound } });
  });

  it.each(
    parsers.flatMap(([command, parse]) => [
      [command, parse, "255 characters", `a${atBound}`],
      [command, parse, "27 characters that NFKC makes 282", `${"\ufdfa".repeat(15)}@example.com`],
      [command, parse, "ten megabytes", `${"a".repeat(10_000_000)}@example.com`],
    ]),
  )("%s refuses %s, saying why and without repeating it", (_, parse, _what, email) => {
    const parsed = parse(["--email", email as string]);
    expect(parsed.ok).toBe(false);
    const problems = (parsed as { problems: string[] }).problems;
    expect(problems).toEqual([
      expect.stringMatching(/^--email is refused: an e-mail address is at most 254 characters/),
    ]);
    expect(problems[0]?.length).toBeLessThan(120);
  });

  it.each(parsers)("%s refuses NUL and other control characters", (_, parse) => {
    expect(parse(["--email", "ada\u0000@example.com"])).toEqual({
      ok: false,
      problems: [
        "--email is refused: an e-mail address holds only assigned Unicode characters, no control characters",
      ],
    });
  });
});

describe("options", () => {
  it("reads --name value, --name=value, repeated values and switches", () => {
    const parsed = parseOptions(["--name", "A", "--role=x", "--role", "y", "--public"], {
      name: "value",
      role: "values",
      public: "switch",
    });
    expect(parsed).toEqual({
      ok: true,
      value: {
        values: new Map([
          ["name", ["A"]],
          ["role", ["x", "y"]],
        ]),
        switches: new Set(["public"]),
      },
    });
  });

  it("lists every problem and never repeats what an unknown option was given", () => {
    expect(
      parseOptions(["--name", "--secret", "hunter2-typed", "stray", "--name", "B", "--name", "C"], {
        name: "value",
      }),
    ).toEqual({
      ok: false,
      problems: [
        "--name needs a value",
        "unknown option --secret",
        "unexpected argument at position 4 (only --options are accepted)",
        "--name is given more than once",
      ],
    });
  });
});

describe("clients create", () => {
  const resources = new Set(["tjm-operations"]);

  it("takes post-logout redirect URIs and a back-channel logout URI for an interactive client", () => {
    const parsed = parseClientsCreate(
      [
        "--name",
        "Console",
        "--redirect-uri",
        "https://console.example.com/callback",
        "--post-logout-redirect-uri",
        "https://console.example.com/",
        "--backchannel-logout-uri",
        "https://console.example.com/backchannel-logout",
      ],
      resources,
    );
    expect(parsed).toMatchObject({
      ok: true,
      value: {
        postLogoutRedirectUris: ["https://console.example.com/"],
        backchannelLogoutUri: "https://console.example.com/backchannel-logout",
      },
    });
  });

  it("refuses logout URIs on plain http and on a client that never signs anyone in", () => {
    const parsed = parseClientsCreate(
      [
        "--name",
        "Robot",
        "--grant",
        "client_credentials",
        "--post-logout-redirect-uri",
        "http://example.com/",
      ],
      resources,
    );
    expect(parsed).toEqual({
      ok: false,
      problems: [
        "--post-logout-redirect-uri: redirect URI 'http://example.com/' must use https (or http on localhost, 127.0.0.1 or [::1])",
        "--post-logout-redirect-uri and --backchannel-logout-uri need the authorization_code grant",
      ],
    });
  });
});
