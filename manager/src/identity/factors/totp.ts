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
 * The time step the typed code matches (now, or one step either side), or undefined. A step at
 * or before `lastTimeStep` is refused: the code was used, or is older than one that was.
 */
export async function matchTotp(
  secret: string,
  typed: string,
  lastTimeStep: number | null,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): Promise<number | undefined> {
  const token = normalizeCode(typed);
  if (!/^\d{6}$/.test(token)) return undefined;
  const result = await verify({
    secret,
    token,
    algorithm: "sha1",
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    epoch: nowSeconds,
    epochTolerance: TOTP_PERIOD_SECONDS,
    ...(lastTimeStep === null ? {} : { afterTimeStep: lastTimeStep }),
  });
  return result.valid && "timeStep" in result ? result.timeStep : undefined;
}
