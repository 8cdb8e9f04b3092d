import { describe, expect, it } from "vitest";
import { reauthenticationOf } from "./routes.ts";

describe("reauthenticationOf", () => {
  it.each([
    [undefined, undefined, {}],
    ["300", undefined, { maxAge: 300 }],
    ["0", "login", { maxAge: 0, prompt: "login" }],
    [undefined, "login", { prompt: "login" }],
  ])("takes maxAge %s and prompt %s", (maxAge, prompt, expected) => {
    expect(reauthenticationOf(maxAge, prompt)).toEqual(expected);
  });

  it.each([
    ["-1", undefined],
    ["1e3", undefined],
    ["300 ", undefined],
    ["86401", undefined],
    [undefined, "none"],
    [undefined, "login consent"],
  ])("refuses maxAge %s and prompt %s: nothing else reaches the provider", (maxAge, prompt) => {
    expect(reauthenticationOf(maxAge, prompt)).toBeUndefined();
  });
});
