import { describe, expect, it } from "vitest";
import { identifierProblem, phoneKey, recoveryIdentifierKey } from "./identifiers.ts";

describe("recovery identifiers", () => {
  it.each([
    ["+989121234567", "+989121234567"],
    ["+98 912 123 4567", "+989121234567"],
    ["+۹۸ ۹۱۲-۱۲۳-۴۵۶۷", "+989121234567"],
    ["0093 (70) 123.4567", "+93701234567"],
  ])("phone %s is keyed %s", (typed, key) => {
    expect(phoneKey(typed)).toBe(key);
  });

  it.each(["0912 123 4567", "+0123456789", "+98912", "ann@example.com", "+98912123456789012"])(
    "%s is no international phone number",
    (typed) => {
      expect(phoneKey(typed)).toBeUndefined();
      expect(identifierProblem("SMS", typed)).toBeDefined();
    },
  );

  it("keys an e-mail address by its one key, prefixed with the channel", () => {
    expect(identifierProblem("EMAIL", " Ann@Example.COM ")).toBeUndefined();
    expect(recoveryIdentifierKey("EMAIL", " Ann@Example.COM ")).toBe("email:ann@example.com");
    expect(recoveryIdentifierKey("SMS", "+98 912 123 4567")).toBe("sms:+989121234567");
  });

  it.each([
    "no-at-sign",
    "two@@example.com",
    "a b@example.com",
    "nul\u0000@example.com",
    `${"a".repeat(300)}@x.org`,
  ])("refuses %j for EMAIL", (typed) => {
    expect(identifierProblem("EMAIL", typed)).toBeDefined();
  });
});
