/**
 * The submit scenario's load, shared by every scenario that compares Managers on it: a Manager
 * on a fresh schema with one project, and POST /api/v1/operations/jobs of the same sample
 * submission from a closed loop of keep-alive clients.
 */
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import type { BenchContext } from "../scenario.ts";
import { JOBS_PATH } from "./api.ts";
import { type Contender, closedLoop, HttpClient } from "./load.ts";
import {
  createProject,
  freshManagerSchema,
  type ManagerRuntime,
  type StartOptions,
  startManager,
} from "./manager-process.ts";

export interface SubmitManagerOptions {
  /** Names the schema: bench_<run>_<name>. */
  name: string;
  runtime: ManagerRuntime;
  /** Added to the Manager's environment, e.g. METRICS_ENABLED. */
  settings?: Record<string, string>;
  start?: StartOptions;
}

/** A Manager on its own fresh schema, so no contender inserts into another's table. */
export async function startSubmitManager(
  context: BenchContext,
  options: SubmitManagerOptions,
): Promise<Contender> {
  const { env } = await freshManagerSchema(context, options.name);
  const { projectId } = await createProject(env, "bench", "bench");
  const manager = await startManager(options.runtime, env, context.cleanup, options.settings, options.start);
  const body = Buffer.from(JSON.stringify(sampleSubmission(projectId)));
  return {
    async measure(load) {
      const client = new HttpClient(manager.baseUrl, context.token, load.concurrency);
      try {
        return await closedLoop(() => client.expect(201, "POST", JOBS_PATH, body), load);
      } finally {
        client.close();
      }
    },
    stop: manager.stop,
  };
}
