import { describe, expect, it } from "vitest";
import { VerifiedTokens } from "./verify.ts";

describe("VerifiedTokens", () => {
  const now = 1_800_000_000_000;

  it("remembers a verified token for at most a minute", () => {
    const cache = new VerifiedTokens();
    cache.remember("t", { sub: "a", exp: now / 1000 + 3600 }, now);
    expect(cache.get("t", now + 59_999)).toMatchObject({ sub: "a" });
    expect(cache.get("t", now + 60_000)).toBeUndefined();
  });

  it("never past the token's own expiry", () => {
    const cache = new VerifiedTokens();
    cache.remember("t", { sub: "a", exp: now / 1000 + 10 }, now);
    expect(cache.get("t", now + 9_999)).toBeDefined();
    expect(cache.get("t", now + 10_000)).toBeUndefined();
  });

  it("stays bounded, forgetting the oldest token first", () => {
    const cache = new VerifiedTokens();
    for (let i = 0; i <= 10_000; i++) cache.remember(`t${i}`, { sub: "a", exp: now / 1000 + 3600 }, now);
    expect(cache.get("t0", now)).toBeUndefined();
    expect(cache.get("t1", now)).toBeDefined();
    expect(cache.get("t10000", now)).toBeDefined();
  });
});
