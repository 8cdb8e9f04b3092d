import { describe, expect, it } from "vitest";
import { assertNever } from "./assert-never.ts";

describe("assertNever", () => {
  it("throws naming the value that no branch handled", () => {
    const unhandled = { type: "pause" } as never;
    expect(() => assertNever(unhandled)).toThrow('unexpected value {"type":"pause"}');
  });
});
