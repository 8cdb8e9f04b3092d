/** Workers SIGKILLed at random points of their jobs (worker-faults.ts says which and how). */
import { describe, it } from "vitest";
import { chaosRuns } from "./scenario.ts";
import { runWorkerFaults } from "./worker-faults.ts";

const RUNS = chaosRuns({ full: 100, ci: 8 });

describe("a Worker killed at random points", () => {
  it(`loses nothing and runs nothing twice over ${RUNS} jobs, each killed once`, async () => {
    await runWorkerFaults({ scenario: "worker-killed", fault: "kill", runs: RUNS, streamedOutputs: true });
  });
});
