import type { Scenario } from "../scenario.ts";
import { argon2Report, argon2Targets } from "./report.ts";
import { type Argon2Result, benchArgon2 } from "./run.ts";

export const argon2Scenario: Scenario<Argon2Result> = {
  run: benchArgon2,
  report: argon2Report,
  targets: argon2Targets,
};
