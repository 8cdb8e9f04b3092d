/** What bench/run.ts hands every scenario, and what each scenario folder exports. */
import type postgres from "postgres";
import type { Settings } from "./settings.ts";
import type { Cleanup } from "./shared/cleanup.ts";

/** What every scenario needs: the services, the operator token and where to clean up. */
export interface BenchContext {
  settings: Settings;
  databaseUrl: string;
  natsUrl: string;
  /** The local TestIssuer: every Manager trusts it as an external operator issuer (operations only). */
  operatorIssuerUrl: string;
  /** One long-lived operator token of the TestIssuer, reused by every request. */
  token: string;
  /** Suffix of this run's schema names, so concurrent or crashed runs never collide. */
  runId: string;
  admin: postgres.Sql;
  cleanup: Cleanup;
  log: (line: string) => void;
}

/**
 * Runs `work`; when it fails, the failure is logged and listed under the report's Failures
 * and `undefined` comes back, so whatever follows still runs.
 */
export type Attempt = <T>(name: string, work: () => Promise<T>) => Promise<T | undefined>;

/**
 * One benchmark scenario. The driver runs it (a throw fails the whole scenario), prints its
 * report at once and its target rows in the final targets table. `result` is undefined
 * when the run failed; the sections then say what was not measured.
 */
export interface Scenario<Result> {
  /** `attempt` lets a scenario of several measurements fail one and go on with the others. */
  run(context: BenchContext, attempt: Attempt): Promise<Result>;
  /** Its markdown sections. */
  report(result: Result | undefined, settings: Settings): string;
  /** Its rows of the targets table: target, measured, met. */
  targets(result: Result | undefined, settings: Settings): string[][];
}
