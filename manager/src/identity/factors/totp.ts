/**
 * TOTP (RFC 6238): SHA-1, 6 digits, 30-second steps, one step of clock drift either way. otplib
 * 13 does the arithmetic: its verify() answers the time step a code matched, which the replay
 * guard stores, and refuses every step up to `afterTimeStep` itself (@oslojs/otp answers only a
 * boolean, so the step would have to be found by trying each one). Pure: no I/O.
 */
import encodeQR from "@paulmillr/qr";
import { generateSecret, generateURI, verify } from "otplib";
import { normalizeCode } from "../delivery/codes.ts";

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Secret length: 20 bytes (160 bits), RFC 4226's recommendation for SHA-1. */
const SECRET_BYTES = 20;

export function newTotpSecret(): string {
  return generateSecret({ length: SECRET_BYTES });
}

/** The otpauth:// URI authenticator apps read: issuer and account label, SHA-1, 6 digits, 30 s. */
export function totpUri(secret: string, issuer: string, accountLabel: string): string {
  return generateURI({
    issuer,
    label: accountLabel,
    secret,
    algorithm: "sha1",
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  });
}

/** The URI as a QR code: an SVG document in a data URI, ready for an <img>. */
export function totpQrCode(uri: string): string {
  const svg = encodeQR(uri, "svg", { ecc: "medium", border: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`;
}

/**
 * What a typed code is to the factor: the time step it matches (now, or one step either side),
 * `used` when it matches only a step at or before `lastTimeStep` (that code signed in already, or
 * it is older than one that did), else `wrong`.
 */
export type TotpMatch = { outcome: "matched"; timeStep: number } | { outcome: "used" } | { outcome: "wrong" };

export async function matchTotp(
  secret: string,
  typed: string,
  lastTimeStep: number | null,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): Promise<TotpMatch> {
  const token = normalizeCode(typed);
  if (!/^\d{6}$/.test(token)) return { outcome: "wrong" };
  const verifyAfter = (afterTimeStep: number | null) =>
    verify({
      secret,
      token,
      algorithm: "sha1",
      digits: TOTP_DIGITS,
      period: TOTP_PERIOD_SECONDS,
      epoch: nowSeconds,
      epochTolerance: TOTP_PERIOD_SECONDS,
      ...(afterTimeStep === null ? {} : { afterTimeStep }),
    });
  const result = await verifyAfter(lastTimeStep);
  if (result.valid && "timeStep" in result) return { outcome: "matched", timeStep: result.timeStep };
  // Checked again without the guard only to say why it is refused: the person waits for the next
  // code instead of retyping this one (a code just used to enrol, in the same step).
  if (lastTimeStep !== null && (await verifyAfter(null)).valid) return { outcome: "used" };
  return { outcome: "wrong" };
}
