/** The Manager as a submit contender: POST /api/v1/operations/jobs against a Manager child process. */
import type { BenchContext } from "../scenario.ts";
import type { Contender } from "../shared/load.ts";
import { startSubmitManager } from "../shared/submit-load.ts";
import type { BenchRuntime } from "./settings.ts";

/**
 * `node20` is the Node entrypoint on the Node 20 binary of the settings, started the way an
 * operator runs the Manager on their own Node.
 */
export function startSubmitContender(context: BenchContext, contender: BenchRuntime): Promise<Contender> {
  const name = `submit_${contender}`;
  return contender === "node20"
    ? startSubmitManager(context, {
        name,
        runtime: "node",
        start: { nodeBinary: context.settings.submit.node20Path },
      })
    : startSubmitManager(context, { name, runtime: contender });
}
