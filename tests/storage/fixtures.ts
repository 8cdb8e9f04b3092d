/** Helpers shared by the storage tests: random files, reading objects back, counting requests. */
import { createHash, randomBytes } from "node:crypto";
import { open } from "node:fs/promises";
import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { Logger } from "@tjm/platform";

export const MIB = 1024 * 1024;

/** Writes `size` random bytes to `path`; returns their sha256. */
export async function writeRandomFile(path: string, size: number): Promise<string> {
  const hash = createHash("sha256");
  const handle = await open(path, "w");
  try {
    for (let written = 0; written < size; ) {
      const chunk = randomBytes(Math.min(MIB, size - written));
      hash.update(chunk);
      await handle.write(chunk);
      written += chunk.length;
    }
  } finally {
    await handle.close();
  }
  return hash.digest("hex");
}

export function sha256(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The object's bytes through the S3 API. */
export async function readObject(client: S3Client, bucket: string, key: string): Promise<Buffer> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await (answer.Body?.transformToByteArray() ?? new Uint8Array()));
}

export interface SentRequest {
  command: string;
  partNumber?: number;
  /** The multipart upload a part or completion belongs to. */
  uploadId?: string;
  /** A part's length. */
  contentLength?: number;
  /** When the request was made (Date.now()). */
  at: number;
}

/** Records every command the client sends (the SDK's command names, e.g. "UploadPartCommand"). */
export function recordRequests(client: S3Client): SentRequest[] {
  const sent: SentRequest[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { PartNumber?: number; UploadId?: string; ContentLength?: number };
      sent.push({
        command: context.commandName ?? "?",
        partNumber: input.PartNumber,
        uploadId: input.UploadId,
        contentLength: input.ContentLength,
        at: Date.now(),
      });
      return next(args);
    },
    { step: "initialize", name: "recordRequests" },
  );
  return sent;
}

export function partsSent(sent: SentRequest[]): number[] {
  return sent
    .filter((request) => request.command === "UploadPartCommand")
    .map((request) => request.partNumber ?? 0)
    .sort((a, b) => a - b);
}

export function count(sent: SentRequest[], command: string): number {
  return sent.filter((request) => request.command === command).length;
}

/** What Node throws when a connection is reset, as the SDK's HTTP handler passes it on. */
export function connectionReset(): Error {
  return Object.assign(new Error("read ECONNRESET"), {
    name: "TimeoutError",
    code: "ECONNRESET",
    errno: -104,
    syscall: "read",
  });
}

export function capturingLogger(): Logger & { lines: { level: string; msg: string; fields: unknown }[] } {
  const lines: { level: string; msg: string; fields: unknown }[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    lines.push({ level, msg, fields });
  };
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** A retry policy short enough for tests; real code uses DEFAULT_RETRY. */
export const FAST_RETRY = { maxAttempts: 3, budgetMs: 1_000, initialDelayMs: 20, maxDelayMs: 100 };
