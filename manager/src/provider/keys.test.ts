import type { JWK } from "jose";
import { describe, expect, it } from "vitest";
import { decryptJwk, deriveKey, encryptJwk, KeyDecryptionError, keySetAt, type StoredKey } from "./keys.ts";

const SECOND = 1000;
const RETENTION_MS = 90 * SECOND;
const EPOCH = Date.parse("2030-01-01T00:00:00Z");

/** A stored key that signs from `signsFromS` seconds after EPOCH, published `leadS` before. */
function key(kid: string, signsFromS: number, leadS = 10): StoredKey {
  return {
    kid,
    createdAt: new Date(EPOCH + (signsFromS - leadS) * SECOND),
    signsFrom: new Date(EPOCH + signsFromS * SECOND),
  };
}

const at = (seconds: number) => new Date(EPOCH + seconds * SECOND);

function kidsAt(keys: StoredKey[], seconds: number) {
  const set = keySetAt(keys, at(seconds), RETENTION_MS);
  return {
    signing: set.signing?.kid,
    published: set.published.map((k) => k.kid),
    retired: set.retired.map((k) => k.kid),
  };
}

describe("keySetAt", () => {
  const first = key("first", 0, 0);
  const second = key("second", 100);
  const third = key("third", 200);

  it.each<[string, StoredKey[], number, ReturnType<typeof kidsAt>]>([
    ["no key at all", [], 0, { signing: undefined, published: [], retired: [] }],
    [
      "a first key before its signs_from: published, not signing",
      [key("first", 10)],
      5,
      { signing: undefined, published: ["first"], retired: [] },
    ],
    ["a first key from its signs_from", [first], 0, { signing: "first", published: ["first"], retired: [] }],
    [
      "a rotated-in key during its lead: published after the one that signs",
      [first, second],
      95,
      { signing: "first", published: ["first", "second"], retired: [] },
    ],
    [
      "the new key from its signs_from: it signs, the old one stays published",
      [first, second],
      100,
      { signing: "second", published: ["second", "first"], retired: [] },
    ],
    [
      "the old key a millisecond before signs_from + retention",
      [first, second],
      189.999,
      { signing: "second", published: ["second", "first"], retired: [] },
    ],
    [
      "the old key at signs_from + retention: retired",
      [first, second],
      190,
      { signing: "second", published: ["second"], retired: ["first"] },
    ],
    [
      "three keys: each retires a retention after its own successor started signing",
      [third, first, second],
      250,
      { signing: "third", published: ["third", "second"], retired: ["first"] },
    ],
    [
      "three keys during the third's lead: signing first, then newer, then older",
      [third, first, second],
      195,
      { signing: "second", published: ["second", "third"], retired: ["first"] },
    ],
  ])("%s", (_, keys, seconds, expected) => {
    expect(kidsAt(keys, seconds)).toEqual(expected);
  });

  it("orders keys with the same signs_from by kid, whatever order they are given in", () => {
    const a = key("a", 50);
    const b = key("b", 50);
    expect(kidsAt([b, a, first], 60)).toEqual({ signing: "b", published: ["b", "a", "first"], retired: [] });
    expect(kidsAt([a, first, b], 60)).toEqual({ signing: "b", published: ["b", "a", "first"], retired: [] });
  });

  it("leaves the given array as it was", () => {
    const keys = [third, first, second];
    keySetAt(keys, at(250), RETENTION_MS);
    expect(keys.map((k) => k.kid)).toEqual(["third", "first", "second"]);
  });
});

describe("encryptJwk and decryptJwk", () => {
  const jwk: JWK = { kty: "RSA", n: "modulus", e: "AQAB", d: "private-exponent", kid: "kid-1" };
  const material = "provider-key-encryption-key-0123456789abcdef";
  const key = deriveKey(material, "signing keys");

  it("derives a 32-byte key per purpose, never the material itself", () => {
    const cookies = deriveKey(material, "cookies");
    expect(key).toHaveLength(32);
    expect(cookies).toHaveLength(32);
    expect(cookies.equals(key)).toBe(false);
    expect(deriveKey(material, "signing keys").equals(key)).toBe(true);
  });

  it("round-trips a JWK, with a fresh nonce each time and no plaintext in the ciphertext", () => {
    const encrypted = encryptJwk(jwk, key, "kid-1");
    expect(decryptJwk(encrypted, key, "kid-1")).toEqual(jwk);
    expect(encryptJwk(jwk, key, "kid-1").equals(encrypted)).toBe(false);
    expect(encrypted.toString("latin1")).not.toContain("private-exponent");
  });

  it("refuses a key stored under another PROVIDER_KEY_ENCRYPTION_KEY, naming the setting and the kid", () => {
    const encrypted = encryptJwk(jwk, key, "kid-1");
    const wrongKey = deriveKey("another-key-encryption-key-0123456789abcdef", "signing keys");
    expect(() => decryptJwk(encrypted, wrongKey, "kid-1")).toThrow(KeyDecryptionError);
    expect(() => decryptJwk(encrypted, wrongKey, "kid-1")).toThrow(
      "signing key kid-1 does not decrypt: PROVIDER_KEY_ENCRYPTION_KEY is not the key it was stored under",
    );
  });

  it("refuses a ciphertext moved to another kid's row, and one altered by a single bit", () => {
    const encrypted = encryptJwk(jwk, key, "kid-1");
    expect(() => decryptJwk(encrypted, key, "kid-2")).toThrow(KeyDecryptionError);
    const altered = Buffer.from(encrypted);
    altered[20] = (altered[20] as number) ^ 1;
    expect(() => decryptJwk(altered, key, "kid-1")).toThrow(KeyDecryptionError);
  });
});
