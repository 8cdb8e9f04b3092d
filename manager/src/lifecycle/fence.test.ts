import { examples } from "@tjm/protocol";
import { describe, expect, it } from "vitest";
import { checkFence } from "./fence.ts";
import type { AttemptState } from "./states.ts";

const held = {
  state: "RUNNING" as AttemptState,
  fencingToken: "2",
  workerId: examples.reports.accepted.workerId,
  instanceId: examples.reports.accepted.instanceId,
  isCurrent: true,
};
const report = examples.reports.accepted;

describe("checkFence", () => {
  it("accepts the current attempt at its token from its Worker's instance", () => {
    expect(checkFence(report, held)).toBeUndefined();
  });

  it.each<[string, Parameters<typeof checkFence>[1], ReturnType<typeof checkFence>]>([
    ["an unknown attempt", undefined, "unknown-attempt"],
    ["an attempt that is no longer current", { ...held, isCurrent: false }, "not-current-attempt"],
    ["an older fencing token", { ...held, fencingToken: "3" }, "fencing-token"],
    [
      "another Worker's attempt",
      { ...held, workerId: "00000000-0000-4000-8000-000000000000" },
      "other-worker",
    ],
    ["an old instance", { ...held, instanceId: "00000000-0000-4000-8000-000000000000" }, "old-instance"],
    ["an ended attempt", { ...held, state: "FAILED" }, "attempt-ended"],
  ])("refuses %s", (_, attempt, reason) => {
    expect(checkFence(report, attempt)).toBe(reason);
  });
});
