import { describe, expect, it } from "vitest";
import { parseIssueArguments } from "./cli.ts";

describe("enrollment-tokens issue arguments", () => {
  it("without options: one hour, any pool, no label (the API's defaults)", () => {
    expect(parseIssueArguments([])).toEqual({ ok: true, request: { ttlSeconds: 3600 } });
  });

  it("takes each option as --name value or --name=value", () => {
    const expected = { ok: true, request: { ttlSeconds: 600, pool: "nvidia", label: "gpu host 3" } };
    expect(
      parseIssueArguments(["--pool", "nvidia", "--ttl-seconds", "600", "--label", "gpu host 3"]),
    ).toEqual(expected);
    expect(parseIssueArguments(["--pool=nvidia", "--ttl-seconds=600", "--label=gpu host 3"])).toEqual(
      expected,
    );
  });

  it.each([
    [["--ttl-seconds", "59"], "--ttl-seconds: Too small: expected number to be >=60"],
    [["--ttl-seconds", "604801"], "--ttl-seconds: Too big: expected number to be <=604800"],
    [["--ttl-seconds", "1h"], "--ttl-seconds must be a whole number of seconds"],
    [["--pool", "tpu"], '--pool: Invalid option: expected one of "cpu"|"nvidia"|"intel"|"amd"'],
    [["--label", "a\u0007b"], "--label: must not contain control characters"],
    [["--label"], "--label needs a value"],
    [["--label", "--pool", "cpu"], "--label needs a value"],
    [["--pool", "cpu", "--pool", "amd"], "--pool is given more than once"],
    [["--token", "x"], "unknown option --token"],
    [["cpu"], "unexpected argument 'cpu'"],
  ])("refuses %j: %s", (args, problem) => {
    expect(parseIssueArguments(args)).toEqual({ ok: false, problems: [problem] });
  });

  it("lists every problem at once", () => {
    const parsed = parseIssueArguments(["--pool", "tpu", "--ttl-seconds", "30"]);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems).toHaveLength(2);
  });
});
