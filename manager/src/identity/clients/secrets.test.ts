import { createHmac } from "node:crypto";
import * as subtle from "@oslojs/crypto/subtle";
import { afterEach, describe, expect, it, vi } from "vitest";
import { generateClientSecret, hashClientSecret, verifyClientSecret } from "./secrets.ts";

vi.mock("@oslojs/crypto/subtle", async (importOriginal) => {
  const original = await importOriginal<typeof import("@oslojs/crypto/subtle")>();
  return { constantTimeEqual: vi.fn(original.constantTimeEqual) };
});

const KEY = "client-secret-key-0123456789abcdef";
const OTHER_KEY = "client-secret-key-fedcba9876543210";

afterEach(() => {
  vi.mocked(subtle.constantTimeEqual).mockClear();
});

describe("client secrets", () => {
  it("are 32 random bytes (256 bits) in base64url behind the tjm_cs_ prefix, never the same twice", () => {
    const secrets = Array.from({ length: 1000 }, generateClientSecret);
    for (const secret of secrets) expect(secret).toMatch(/^tjm_cs_[A-Za-z0-9_-]{43}$/);
    expect(new Set(secrets).size).toBe(secrets.length);
  });

  it("are stored as HMAC-SHA-256 under the server key, in base64url without padding", () => {
    const expected = createHmac("sha256", KEY).update("tjm_cs_abc").digest("base64url");
    expect(hashClientSecret("tjm_cs_abc", KEY)).toBe(expected);
    expect(expected).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("hash differently under another key", () => {
    expect(hashClientSecret("tjm_cs_abc", KEY)).not.toBe(hashClientSecret("tjm_cs_abc", OTHER_KEY));
  });
});

describe("verifying a client secret", () => {
  const secret = generateClientSecret();
  const stored = hashClientSecret(secret, KEY);

  it("accepts the secret under the key it was stored with", () => {
    expect(verifyClientSecret(secret, stored, KEY)).toBe(true);
  });

  it("refuses another secret", () => {
    expect(verifyClientSecret(generateClientSecret(), stored, KEY)).toBe(false);
    expect(verifyClientSecret(`${secret}x`, stored, KEY)).toBe(false);
  });

  it("refuses the right secret under another key", () => {
    expect(verifyClientSecret(secret, stored, OTHER_KEY)).toBe(false);
  });

  it("refuses when the stored value is the secret itself, or empty", () => {
    expect(verifyClientSecret(secret, secret, KEY)).toBe(false);
    expect(verifyClientSecret(secret, "", KEY)).toBe(false);
  });

  it("compares the hashes in constant time", () => {
    verifyClientSecret("tjm_cs_wrong", stored, KEY);
    expect(subtle.constantTimeEqual).toHaveBeenCalledTimes(1);
    const encoder = new TextEncoder();
    expect(subtle.constantTimeEqual).toHaveBeenCalledWith(
      encoder.encode(hashClientSecret("tjm_cs_wrong", KEY)),
      encoder.encode(stored),
    );
  });
});
