/** The Manager as a submit contender: POST /api/v1/operations/jobs against a Manager child process. */
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import type { BenchContext } from "../scenario.ts";
import { JOBS_PATH } from "../shared/api.ts";
import { type Contender, closedLoop, HttpClient } from "../shared/load.ts";
import { createProject, freshManagerSchema, startManager } from "../shared/manager-process.ts";
import type { BenchRuntime } from "./settings.ts";

/**
 * A Manager on its own fresh schema, so no contender inserts into another's table. `node20`
 * is the Node entrypoint on the Node 20 binary of the settings, started the way an operator
 * runs the Manager on their own Node.
 */
export async function startSubmitContender(
  context: BenchContext,
  contender: BenchRuntime,
): Promise<Contender> {
  const { env } = await freshManagerSchema(context, `submit_${contender}`);
  const { projectId } = await createProject(env, "bench", "bench");
  const manager =
    contender === "node20"
      ? await startManager(
          "node",
          env,
          context.cleanup,
          {},
          { nodeBinary: context.settings.submit.node20Path },
        )
      : await startManager(contender, env, context.cleanup);
  const body = Buffer.from(JSON.stringify(sampleSubmission(projectId)));
  return {
    async measure(options) {
      const client = new HttpClient(manager.baseUrl, context.token, options.concurrency);
      try {
        return await closedLoop(() => client.expect(201, "POST", JOBS_PATH, body), options);
      } finally {
        client.close();
      }
    },
    stop: manager.stop,
  };
}
