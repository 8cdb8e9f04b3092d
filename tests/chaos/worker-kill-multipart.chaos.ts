/** Worker agents killed under a multipart commit on Swift (worker-faults.ts says where and how). */
import { describe, it } from "vitest";
import { chaosRuns } from "./scenario.ts";
import { runWorkerFaults } from "./worker-faults.ts";

const RUNS = chaosRuns({ full: 50, ci: 8 });

describe("a Worker killed at random points under a multipart commit", () => {
  it(`loses nothing and runs nothing twice over ${RUNS} jobs, each killed once`, async () => {
    await runWorkerFaults({
      scenario: "worker-killed-multipart",
      fault: "kill",
      runs: RUNS,
      commit: "multipart",
      streamedOutputs: true,
    });
  });
});
