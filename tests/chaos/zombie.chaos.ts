/** Zombie Workers: frozen past their lease, then continued (worker-faults.ts says where and how). */
import { describe, it } from "vitest";
import { chaosRuns } from "./scenario.ts";
import { runWorkerFaults } from "./worker-faults.ts";

const RUNS = chaosRuns({ full: 100, ci: 6 });

describe("a zombie Worker", () => {
  it(`changes nothing once thawed, over ${RUNS} jobs, each frozen once past its lease`, async () => {
    await runWorkerFaults({ scenario: "worker-zombie", fault: "freeze", runs: RUNS, streamedOutputs: true });
  });
});
