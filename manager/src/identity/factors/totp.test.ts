import { generate } from "otplib";
import { describe, expect, it } from "vitest";
import { newRecoveryCodes, normalizeRecoveryCode, recoveryCodeHmac } from "./recovery-codes.ts";
import { decryptFactorSecret, encryptFactorSecret, factorSecretKey } from "./secrets.ts";
import { matchTotp, newTotpSecret } from "./totp.ts";

const NOW = 1_795_000_000;
const STEP = Math.floor(NOW / 30);
const persian = (code: string) => code.replace(/\d/g, (d) => String.fromCodePoint(0x06f0 + Number(d)));

describe("matchTotp", () => {
  const secret = newTotpSecret();
  const codeAt = (steps: number) => generate({ secret, epoch: NOW + steps * 30 });
  const matched = (timeStep: number) => ({ outcome: "matched", timeStep });
  const wrong = { outcome: "wrong" };
  const used = { outcome: "used" };

  it("answers the step a code matches, one step of drift either way", async () => {
    expect(await matchTotp(secret, await codeAt(0), null, NOW)).toEqual(matched(STEP));
    expect(await matchTotp(secret, await codeAt(-1), null, NOW)).toEqual(matched(STEP - 1));
    expect(await matchTotp(secret, await codeAt(1), null, NOW)).toEqual(matched(STEP + 1));
  });

  it("refuses a code two steps away as wrong, used before or not", async () => {
    expect(await matchTotp(secret, await codeAt(-2), null, NOW)).toEqual(wrong);
    expect(await matchTotp(secret, await codeAt(2), null, NOW)).toEqual(wrong);
    expect(await matchTotp(secret, await codeAt(-2), STEP, NOW)).toEqual(wrong);
  });

  it("refuses the last accepted step and every earlier one as used", async () => {
    expect(await matchTotp(secret, await codeAt(0), STEP, NOW)).toEqual(used);
    expect(await matchTotp(secret, await codeAt(-1), STEP, NOW)).toEqual(used);
    expect(await matchTotp(secret, await codeAt(1), STEP, NOW)).toEqual(matched(STEP + 1));
  });

  it("accepts Persian digits and spaces; refuses anything that is not six digits", async () => {
    const code = await codeAt(0);
    expect(await matchTotp(secret, persian(`${code.slice(0, 3)} ${code.slice(3)}`), null, NOW)).toEqual(
      matched(STEP),
    );
    expect(await matchTotp(secret, `${code}0`, null, NOW)).toEqual(wrong);
    expect(await matchTotp(secret, "abcdef", null, NOW)).toEqual(wrong);
  });
});

describe("recovery codes", () => {
  it("ten distinct codes of 120 bits, compared without case, spaces or hyphens", () => {
    const codes = newRecoveryCodes();
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^([A-Z2-7]{4}-){5}[A-Z2-7]{4}$/);
    const key = Buffer.alloc(32, 1);
    const code = codes[0] as string;
    expect(normalizeRecoveryCode(` ${code.toLowerCase()} `)).toBe(code.replace(/-/g, ""));
    expect(recoveryCodeHmac(key, "a", code.toLowerCase().replace(/-/g, " "))).toBe(
      recoveryCodeHmac(key, "a", code),
    );
    // Bound to the account: the same code of another account is another HMAC.
    expect(recoveryCodeHmac(key, "a", code)).not.toBe(recoveryCodeHmac(key, "b", code));
  });
});

describe("factor secrets", () => {
  it("decrypt only under their key and bound to their row", () => {
    const key = factorSecretKey("a root secret of at least thirty-two characters");
    const stored = encryptFactorSecret(key, "factor-1", "JBSWY3DPEHPK3PXP");
    expect(stored.includes("JBSWY3DPEHPK3PXP")).toBe(false);
    expect(decryptFactorSecret(key, "factor-1", stored)).toBe("JBSWY3DPEHPK3PXP");
    expect(() => decryptFactorSecret(key, "factor-2", stored)).toThrow();
    expect(() =>
      decryptFactorSecret(factorSecretKey("another root secret of thirty-two chars"), "factor-1", stored),
    ).toThrow();
  });
});
