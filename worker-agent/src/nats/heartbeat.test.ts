import { HeartbeatSchema } from "@tjm/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildHeartbeat, SentAtClock } from "./heartbeat.ts";

const instance = {
  workerId: "0b6f1c52-5d0a-4c8e-9d7e-2a4f3c1b0e9d",
  instanceId: "7d3e2a10-9c4b-4f6e-8a1d-5b2c3e4f6a7b",
};

describe("SentAtClock", () => {
  it("follows the wall clock while it moves forward", () => {
    const clock = new SentAtClock();
    expect([1000, 1200, 1400].map((now) => clock.next(now))).toEqual([1000, 1200, 1400]);
  });

  it("moves on by a millisecond when the wall clock stalls or steps back", () => {
    const clock = new SentAtClock();
    expect([5000, 5000, 4000, 5001, 6000].map((now) => clock.next(now))).toEqual([
      5000, 5001, 5002, 5003, 6000,
    ]);
  });

  it("always gives strictly increasing times", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 4_000_000_000_000 }), { minLength: 1, maxLength: 50 }),
        (nows) => {
          const clock = new SentAtClock();
          const sent = nows.map((now) => clock.next(now));
          for (let i = 1; i < sent.length; i++) expect(sent[i]).toBeGreaterThan(sent[i - 1] as number);
        },
      ),
    );
  });
});

describe("buildHeartbeat", () => {
  it("is a valid heartbeat with all capacity free while nothing runs", () => {
    const heartbeat = buildHeartbeat(instance, Date.UTC(2026, 10, 21, 12), [], 4);
    expect(HeartbeatSchema.parse(heartbeat)).toEqual({
      protocolVersion: heartbeat.protocolVersion,
      ...instance,
      sentAt: "2026-11-21T12:00:00.000Z",
      activeAttempts: [],
      freeCapacity: 4,
    });
  });

  it("lists the held attempts next to the free slots it is given", () => {
    const attempt = { attemptId: "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b", fencingToken: "7" };
    expect(buildHeartbeat(instance, 0, [attempt], 1)).toMatchObject({
      activeAttempts: [attempt],
      freeCapacity: 1,
    });
  });
});
