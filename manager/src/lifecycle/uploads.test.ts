import { describe, expect, it } from "vitest";
import { resumeUploadsRefusal, uploadPauseExpiry } from "./uploads.ts";

describe("uploads waiting for storage", () => {
  it("are kept 24 h from the first pause, never past the job deadline", () => {
    const pausedAt = new Date("2026-11-21T10:00:00Z");
    expect(uploadPauseExpiry(pausedAt, new Date("2026-11-25T00:00:00Z"))).toEqual(
      new Date("2026-11-22T10:00:00Z"),
    );
    expect(uploadPauseExpiry(pausedAt, new Date("2026-11-21T12:00:00Z"))).toEqual(
      new Date("2026-11-21T12:00:00Z"),
    );
  });

  const eligible: Parameters<typeof resumeUploadsRefusal>[0] = {
    now: new Date("2026-11-21T11:00:00Z"),
    pauseExpiresAt: new Date("2026-11-22T10:00:00Z"),
    jobDeadline: new Date("2026-11-24T10:00:00Z"),
    worker: { exists: true, disabled: false },
  };

  // A job or attempt not WAITING_FOR_STORAGE is refused by the transition table (resolve.test.ts).
  it.each<[string, Partial<typeof eligible>, RegExp | undefined]>([
    ["a waiting job with its Worker", {}, undefined],
    ["expired retention", { now: new Date("2026-11-22T10:00:00Z") }, /retention has expired/],
    ["no pause recorded", { pauseExpiresAt: null }, /retention has expired/],
    ["a passed deadline", { jobDeadline: new Date("2026-11-21T10:59:59Z") }, /deadline has passed/],
    ["a disabled Worker", { worker: { exists: true, disabled: true } }, /gone or disabled/],
    ["a Worker that is gone", { worker: { exists: false, disabled: false } }, /gone or disabled/],
  ])("resume-uploads for %s", (_, overrides, refusal) => {
    const answer = resumeUploadsRefusal({ ...eligible, ...overrides });
    if (refusal) expect(answer).toMatch(refusal);
    else expect(answer).toBeUndefined();
  });
});
