/**
 * What the Worker reports when an attempt cannot finish, from the error that stopped it. No
 * I/O. Each code says whose problem it is: the input, the plan, storage or the encode.
 */
import { messageLimits } from "@tjm/protocol";
import { FfmpegFailedError } from "../run/ffmpeg-process.ts";
import { InputUnreadableError } from "../run/media-info.ts";
import { PlanNotApplicableError } from "../run/plan-errors.ts";
import {
  InputNotFoundError,
  StorageFailedError,
  StorageRefusedError,
  StorageUnavailableError,
} from "../storage/index.ts";
import { InputWaitExpiredError } from "../storage/input-wait.ts";

export interface AttemptFailure {
  failureCode: string;
  failureMessage: string;
}

/** Keeps the end of long text (ffmpeg's last lines say what went wrong) within the report's bound. */
function bounded(text: string): string {
  // Control characters other than tab and newline are not allowed in the report.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ").trim() || "(no details)";
  const max = messageLimits.failureMessageLength;
  return clean.length <= max ? clean : `…${clean.slice(clean.length - max + 1)}`;
}

export function describeFailure(error: unknown, phase: "input" | "encode" | "upload"): AttemptFailure {
  if (error instanceof InputNotFoundError) {
    return { failureCode: "INPUT_NOT_FOUND", failureMessage: bounded(error.message) };
  }
  if (error instanceof StorageRefusedError) {
    return {
      failureCode: error.reason === "no-such-bucket" ? "STORAGE_BUCKET_NOT_FOUND" : "STORAGE_ACCESS_DENIED",
      failureMessage: bounded(error.message),
    };
  }
  // Reads of the input wait for storage (input-wait.ts) and uploads pause for it
  // (WAITING_FOR_STORAGE); these come from a read the store refused to answer after that, or
  // from a wait that ran out.
  if (error instanceof StorageUnavailableError || error instanceof InputWaitExpiredError) {
    return { failureCode: "STORAGE_UNAVAILABLE", failureMessage: bounded(error.message) };
  }
  if (error instanceof StorageFailedError) {
    return { failureCode: "STORAGE_FAILED", failureMessage: bounded(error.message) };
  }
  if (error instanceof InputUnreadableError) {
    return { failureCode: error.failureCode, failureMessage: bounded(error.message) };
  }
  if (error instanceof PlanNotApplicableError) {
    return { failureCode: error.failureCode, failureMessage: bounded(error.message) };
  }
  if (error instanceof FfmpegFailedError) {
    return {
      failureCode: "ENCODE_FAILED",
      failureMessage: bounded(error.message),
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { failureCode: "WORKER_ERROR", failureMessage: bounded(`${phase}: ${message}`) };
}
