import { InputNotFoundError, StorageRefusedError, StorageUnavailableError } from "@tjm/storage";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { JobsDeps } from "./deps.ts";
import { type AttemptLog, AttemptLogParamsSchema, AttemptLogSchema } from "./schema.ts";
import { findAttemptLog } from "./store.ts";

/** 64 KiB: ffmpeg's last few hundred lines, where its error or its summary is. */
export const LOG_TAIL_BYTES = 64 * 1024;

export const getAttemptLogRoute = operatorRoute({
  method: "get",
  path: "/jobs/{jobId}/attempts/{attemptId}/log",
  operationId: "getAttemptLog",
  tags: ["jobs"],
  summary: "Read the tail of an attempt's log",
  description: `The last ${LOG_TAIL_BYTES / 1024} KiB of the attempt's ffmpeg log, read from its logsUri. The Worker uploads the log when the attempt ends (completed or failed), so a running attempt has none yet: 404, as for a job or attempt that does not exist, an attempt that ended without a log (it never ran, or its Worker could not upload one), or a log no longer in storage.`,
  request: { params: AttemptLogParamsSchema },
  responses: { 200: jsonResponse("The log's tail", AttemptLogSchema) },
  errors: ["job.attempt_not_found", "job.log_not_found", "dependency.unavailable"],
});

/** The tail as text: cut at its first line break when the log is longer, so no line starts halfway. */
export function tailText(bytes: Uint8Array, truncated: boolean): string {
  const text = new TextDecoder("utf-8").decode(bytes);
  if (!truncated) return text;
  const lineBreak = text.indexOf("\n");
  return lineBreak === -1 ? text : text.slice(lineBreak + 1);
}

export const getAttemptLog =
  (deps: JobsDeps): AppRouteHandler<typeof getAttemptLogRoute> =>
  async (c) => {
    const { jobId, attemptId } = c.req.valid("param");
    const attempt = await findAttemptLog(deps.sql, jobId, attemptId);
    if (!attempt) throw new ApiError("job.attempt_not_found", `Job ${jobId} has no attempt ${attemptId}`);
    const { logsUri } = attempt;
    if (!logsUri) {
      throw new ApiError(
        "job.log_not_found",
        attempt.endedAt
          ? `Attempt ${attemptId} ended without a log (it never ran, or its Worker could not upload one)`
          : `Attempt ${attemptId} has no log yet: the Worker uploads it when the attempt ends`,
      );
    }
    let tail: Awaited<ReturnType<JobsDeps["readLogTail"]>>;
    try {
      tail = await deps.readLogTail(logsUri, LOG_TAIL_BYTES);
    } catch (err) {
      if (err instanceof InputNotFoundError)
        throw new ApiError(
          "job.log_not_found",
          `The log of attempt ${attemptId} is not in storage: ${logsUri}`,
        );
      if (err instanceof StorageUnavailableError || err instanceof StorageRefusedError) {
        deps.logger.warn("cannot read an attempt's log", { jobId, attemptId, logsUri, err });
        throw new ApiError(
          "dependency.unavailable",
          `The storage holding ${logsUri} cannot be read right now`,
        );
      }
      throw err;
    }
    const truncated = tail.start > 0;
    const log: AttemptLog = {
      jobId,
      attemptId,
      logsUri,
      totalBytes: tail.totalBytes,
      truncated,
      text: tailText(tail.bytes, truncated),
    };
    return c.json(log, 200);
  };
