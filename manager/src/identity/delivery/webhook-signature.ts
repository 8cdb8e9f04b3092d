/**
 * The SMS webhook's signature: HMAC-SHA-256 under the shared secret over `<timestamp>.<body>`,
 * the timestamp (Unix seconds) in its own header. Covering the timestamp lets a receiver refuse
 * a replayed request once it is older than its tolerance. Web Crypto only: the same code runs
 * on Node, Deno and Bun, and receivers may copy the verifier.
 */

export const SIGNATURE_HEADER = "tjm-signature";
export const TIMESTAMP_HEADER = "tjm-timestamp";
export const MESSAGE_ID_HEADER = "idempotency-key";

/** The scheme's version prefix: `v1=<hex>`. */
const VERSION = "v1";

/** Five minutes: a receiver's clock may differ that much and a slow retry still lands. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const encoder = new TextEncoder();

async function hmac(secret: string, timestamp: string, body: string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`${timestamp}.${body}`)));
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");

/** The signature header's value for a body sent at `timestamp` (Unix seconds). */
export async function signWebhook(secret: string, timestamp: number, body: string): Promise<string> {
  return `${VERSION}=${hex(await hmac(secret, String(timestamp), body))}`;
}

export type WebhookVerdict = { ok: true } | { ok: false; reason: "malformed" | "stale" | "bad-signature" };

/** Equal length and content, in time independent of where they differ. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let index = 0; index < a.length; index++) difference |= a.charCodeAt(index) ^ b.charCodeAt(index);
  return difference === 0;
}

/**
 * A receiver's check: the signature matches the raw body and timestamp, and the timestamp is
 * within `toleranceSeconds` of `now`. Verify the raw bytes received, before parsing the JSON.
 */
export async function verifyWebhook(options: {
  secret: string;
  body: string;
  timestamp: string | null | undefined;
  signature: string | null | undefined;
  toleranceSeconds?: number;
  now?: Date;
}): Promise<WebhookVerdict> {
  const { timestamp, signature } = options;
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || !signature?.startsWith(`${VERSION}=`)) {
    return { ok: false, reason: "malformed" };
  }
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) {
    return { ok: false, reason: "stale" };
  }
  const expected = `${VERSION}=${hex(await hmac(options.secret, timestamp, options.body))}`;
  return constantTimeEqual(expected, signature) ? { ok: true } : { ok: false, reason: "bad-signature" };
}
