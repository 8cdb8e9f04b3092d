import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTokenHasher, generateEnrollmentToken } from "./tokens.ts";

describe("enrollment tokens", () => {
  it("are 32 random bytes in base64url behind a recognisable prefix, never the same twice", () => {
    const tokens = Array.from({ length: 1000 }, generateEnrollmentToken);
    for (const token of tokens) expect(token).toMatch(/^tjm_et_[A-Za-z0-9_-]{43}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it("are stored as HMAC-SHA256 under the configured secret", async () => {
    const hash = await createTokenHasher("secret-one-0123456789abcdef012345")("tjm_et_abc");
    const expected = createHmac("sha256", "secret-one-0123456789abcdef012345").update("tjm_et_abc").digest();
    expect(Buffer.from(hash)).toEqual(expected);
  });

  it("hash differently under another secret", async () => {
    const one = await createTokenHasher("secret-one-0123456789abcdef012345")("tjm_et_abc");
    const two = await createTokenHasher("secret-two-0123456789abcdef012345")("tjm_et_abc");
    expect(Buffer.from(one).equals(Buffer.from(two))).toBe(false);
  });
});
