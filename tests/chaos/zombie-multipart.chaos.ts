/** Zombie Workers under a multipart commit on Swift (worker-faults.ts says where and how). */
import { describe, it } from "vitest";
import { chaosRuns } from "./scenario.ts";
import { runWorkerFaults } from "./worker-faults.ts";

const RUNS = chaosRuns({ full: 50, ci: 6 });

describe("a zombie Worker under a multipart commit", () => {
  it(`completes none of its uploads once thawed, over ${RUNS} jobs, each frozen once past its lease`, async () => {
    await runWorkerFaults({
      scenario: "worker-zombie-multipart",
      fault: "freeze",
      runs: RUNS,
      commit: "multipart",
      streamedOutputs: true,
    });
  });
});
