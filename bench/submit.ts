/** POST /api/v1/operations/jobs throughput and latency against a Manager child process. */
import { sampleSubmission } from "../tests/harness/plans.ts";
import { deleteStreams } from "../tests/harness/streams.ts";
import { dropSchemaAtEnd } from "./database.ts";
import { type Contender, closedLoop, HttpClient } from "./load.ts";
import { createProject, type ManagerEnvironment, migrateSchema, startManager } from "./manager-process.ts";
import { type BenchContext, type BenchRuntime, loadOptions } from "./settings.ts";

export const JOBS_PATH = "/api/v1/operations/jobs";

/**
 * A Manager's environment on its own schema and subject prefix (the schema's name); the
 * streams its relay creates for that prefix are deleted when the run ends.
 */
export function managerEnvironment(context: BenchContext, schema: string): ManagerEnvironment {
  context.cleanup.defer(`delete the streams of ${schema}`, () => deleteStreams(context.natsUrl, schema));
  return {
    DATABASE_URL: context.databaseUrl,
    DATABASE_SCHEMA: schema,
    NATS_URL: context.natsUrl,
    NATS_SUBJECT_PREFIX: schema,
    OIDC_ISSUER_URL: context.issuerUrl,
  };
}

/**
 * A Manager on its own fresh schema, so no contender inserts into another's table. `node20`
 * is the Node entrypoint on the Node 20 binary of the settings, started the way an operator
 * runs the Manager on their own Node.
 */
export async function startSubmitContender(
  context: BenchContext,
  contender: BenchRuntime,
): Promise<Contender> {
  const schema = `bench_${context.runId}_submit_${contender}`;
  dropSchemaAtEnd(context.admin, schema, context.cleanup);
  const env = managerEnvironment(context, schema);
  await migrateSchema(env);
  const { projectId } = await createProject(env, "bench", "bench");
  const manager =
    contender === "node20"
      ? await startManager("node", env, context.cleanup, {}, context.settings.node20Path)
      : await startManager(contender, env, context.cleanup);
  const body = Buffer.from(JSON.stringify(sampleSubmission(projectId)));
  return {
    async measure(concurrency) {
      const client = new HttpClient(manager.baseUrl, context.token, concurrency);
      try {
        return await closedLoop(
          () => client.expect(201, "POST", JOBS_PATH, body),
          loadOptions(context.settings, concurrency),
        );
      } finally {
        client.close();
      }
    },
    stop: manager.stop,
  };
}
