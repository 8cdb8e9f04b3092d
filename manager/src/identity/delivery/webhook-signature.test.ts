import { describe, expect, it } from "vitest";
import { signWebhook, verifyWebhook } from "./webhook-signature.ts";

const secret = "a-shared-secret-of-at-least-32-characters";
const body = '{"id":"5f0c","to":"+93700000000","text":"code 123456"}';
const sentAt = new Date("2026-11-27T10:00:00Z");
const timestamp = sentAt.getTime() / 1000;

describe("the SMS webhook's signature", () => {
  it("is HMAC-SHA-256 over `timestamp.body` in hex, versioned v1 (a receiver can compute it with any HMAC library)", async () => {
    const { createHmac } = await import("node:crypto");
    const expected = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
    expect(await signWebhook(secret, timestamp, body)).toBe(`v1=${expected}`);
  });

  it("verifies for the same secret, body and timestamp within the tolerance", async () => {
    const signature = await signWebhook(secret, timestamp, body);
    const later = new Date(sentAt.getTime() + 299_000);
    expect(
      await verifyWebhook({ secret, body, timestamp: String(timestamp), signature, now: later }),
    ).toEqual({
      ok: true,
    });
  });

  it.each([
    ["another secret", { secret: `${secret}x` }, "bad-signature"],
    ["a changed body", { body: body.replace("123456", "654321") }, "bad-signature"],
    ["a changed timestamp", { timestamp: String(timestamp + 1) }, "bad-signature"],
    ["a timestamp older than the tolerance", { now: new Date(sentAt.getTime() + 301_000) }, "stale"],
    ["a timestamp from the future", { now: new Date(sentAt.getTime() - 301_000) }, "stale"],
    ["no timestamp", { timestamp: undefined }, "malformed"],
    ["a timestamp that is not a number", { timestamp: "yesterday" }, "malformed"],
    ["no signature", { signature: null }, "malformed"],
    ["another scheme", { signature: "v2=00" }, "malformed"],
  ] as const)("refuses %s", async (_, change, reason) => {
    const signature = await signWebhook(secret, timestamp, body);
    const verdict = await verifyWebhook({
      secret,
      body,
      timestamp: String(timestamp),
      signature,
      now: sentAt,
      ...change,
    });
    expect(verdict).toEqual({ ok: false, reason });
  });
});
