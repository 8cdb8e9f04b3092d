/**
 * Streams an input object to ffmpeg and ffprobe without a download: a loopback HTTP server
 * that answers each of their requests (Range included, so they can seek) with a ranged GET
 * of the object through the attempt's own S3 client.
 *
 * Why a relay rather than a presigned URL on ffmpeg's command line: any local user reads
 * another user's command lines (/proc/<pid>/cmdline, `ps`), and a presigned URL is a
 * credential. The relay's URL names only a loopback port and a random path, and the relay
 * answers only connections whose socket belongs to this process's user (the owner column of
 * /proc/net/tcp), so the URL is worth nothing to another user; the store's credentials never
 * leave this process. The user the agent runs as can read the lease file anyway.
 *
 * A store that stops answering does not end a read: past its retry budget the read waits for
 * the store (InputWait), and an answer that broke off mid-body goes on from the byte where it
 * stopped, so ffmpeg sees a pause, never an error it would take for the input's end.
 *
 * It also measures what a decision to stream needs: whether the store honours Range
 * requests, how many bytes the readers pulled against the object's size (a badly interleaved
 * input makes ffmpeg seek back and forth, pulling more than the file), and whether a read
 * failed for good (refused, the object gone or replaced, or storage away longer than the
 * attempt waits). After any of these the relay answers 503 to every request, and the caller
 * falls back to a download.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { GetObjectCommand, type GetObjectCommandOutput, type S3Client } from "@aws-sdk/client-s3";
import {
  classifyStorageError,
  type RetryOptions,
  retryContext,
  splitS3Uri,
  toStorageError,
  withRetry,
} from "@tjm/storage";
import type { InputWait } from "./input-wait.ts";

/** Why the relay stopped being a good way to read this input. */
export type RelayProblem =
  | { kind: "read-error"; message: string }
  | { kind: "no-ranges" }
  | { kind: "excess-reads"; bytesServed: number; objectBytes: number };

export interface RelayMeasures {
  requests: number;
  bytesServed: number;
  /** From the store's Content-Range; unknown until the first answer. */
  objectBytes: number | undefined;
}

export interface InputRelayOptions {
  /**
   * Reading more than this many times the object's size makes the relay give up (status 503
   * to every later request) and report excess-reads: a download reads it once.
   */
  maxReadFactor?: number;
  /**
   * Bytes each request may send beyond what its reader takes: an open-ended range streams on
   * into the sockets' buffers until the reader hangs up to seek elsewhere, so the count runs
   * ahead of what ffmpeg read by up to this much per request. Default 4 MiB.
   */
  readAheadBytes?: number;
  /** Called once, with the first problem. */
  onProblem?: (problem: RelayProblem) => void;
  /** Each read is retried like a download's request: the Worker's storage retry policy. */
  retry?: Omit<RetryOptions, "signal">;
  /** The attempt's: once aborted, reads in flight stop and the relay closes. */
  signal?: AbortSignal;
  /**
   * Reads that spend their retry budget wait here for the store instead of failing: ffmpeg's
   * read is held meanwhile (it sets no read timeout), and goes on once the store answers.
   */
  wait?: InputWait;
}

const DEFAULT_MAX_READ_FACTOR = 2;
const DEFAULT_READ_AHEAD_BYTES = 4 * 1024 * 1024;

export class InputRelay {
  private problemSeen: RelayProblem | undefined;
  /** The object's version, from the first answer: every later read is pinned to it. */
  private etag: string | undefined;
  private readonly measured: RelayMeasures = { requests: 0, bytesServed: 0, objectBytes: undefined };

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly options: InputRelayOptions,
  ) {}

  static async open(client: S3Client, uri: string, options: InputRelayOptions = {}): Promise<InputRelay> {
    const { bucket, key } = splitS3Uri(uri);
    const path = `/${randomBytes(16).toString("hex")}`;
    let relay: InputRelay | undefined;
    const server = createServer((request, response) => {
      void relay?.answer(client, bucket, key, path, request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const opened = new InputRelay(server, `http://127.0.0.1:${port}${path}`, options);
    relay = opened;
    options.signal?.addEventListener("abort", () => void opened.close(), { once: true });
    return opened;
  }

  get problem(): RelayProblem | undefined {
    return this.problemSeen;
  }

  get measures(): Readonly<RelayMeasures> {
    return { ...this.measured };
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private report(problem: RelayProblem): void {
    if (this.problemSeen) return;
    this.problemSeen = problem;
    this.options.onProblem?.(problem);
  }

  private async answer(
    client: S3Client,
    bucket: string,
    key: string,
    path: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const port = request.socket.remotePort;
    if (request.url !== path || !["GET", "HEAD"].includes(request.method ?? "")) {
      response.writeHead(404).end();
      return;
    }
    if (port === undefined || !(await ownedByThisUser(port, (this.server.address() as AddressInfo).port))) {
      response.writeHead(403).end();
      return;
    }
    if (this.problemSeen) {
      response.writeHead(503).end();
      return;
    }
    this.measured.requests++;
    const range = request.headers.range;
    // Aborted when the reader hangs up (ffmpeg seeking elsewhere): no read error, then.
    const readerGone = new AbortController();
    response.on("close", () => readerGone.abort());
    const signal = this.options.signal
      ? AbortSignal.any([readerGone.signal, this.options.signal])
      : readerGone.signal;
    const read = (readRange: string | undefined) =>
      this.read(client, bucket, key, readRange, readerGone.signal, signal);
    try {
      const answer = await read(range);
      // The reader hung up while the store answered (ffmpeg seeking elsewhere): its body would
      // otherwise hold the store's connection open for as long as the agent runs.
      if (readerGone.signal.aborted) {
        dropBody(answer.Body);
        return;
      }
      const total = totalOf(answer.ContentRange) ?? (range ? undefined : answer.ContentLength);
      if (total !== undefined) this.measured.objectBytes = total;
      if (range && answer.ContentRange === undefined) {
        // The store sent the whole object for a ranged request: ffmpeg could not seek.
        dropBody(answer.Body);
        this.report({ kind: "no-ranges" });
        response.writeHead(503).end();
        return;
      }
      const headers: Record<string, string | number> = {
        "Accept-Ranges": "bytes",
        "Content-Type": "application/octet-stream",
      };
      if (answer.ContentLength !== undefined) headers["Content-Length"] = answer.ContentLength;
      if (answer.ContentRange) headers["Content-Range"] = answer.ContentRange;
      response.writeHead(answer.ContentRange ? 206 : 200, headers);
      if (request.method === "HEAD" || !answer.Body) {
        dropBody(answer.Body);
        response.end();
        return;
      }
      const first = firstByteOf(answer.ContentRange) ?? 0;
      const length = answer.ContentLength;
      let body = answer.Body;
      let sent = 0;
      for (;;) {
        try {
          sent += await this.relayBody(body, response, readerGone.signal);
        } catch (error) {
          if (readerGone.signal.aborted || this.options.signal?.aborted) throw error;
          if (length === undefined || classifyStorageError(error) !== "recoverable") throw error;
          sent += (error as PartialBodyError).bytes;
        }
        if (length === undefined || sent >= length) break;
        // The store's answer broke off mid-body. The reader keeps its connection and gets the
        // rest from where it stopped once the store answers again: a reader that saw an error
        // would take it for the input's end, or start its read over.
        const rest = await read(`bytes=${first + sent}-${first + length - 1}`);
        if (!rest.Body) throw new Error("the store's answer has no body");
        body = rest.Body;
      }
      response.end();
    } catch (error) {
      if (
        !readerGone.signal.aborted &&
        !this.options.signal?.aborted &&
        this.problem?.kind !== "excess-reads"
      ) {
        this.report({ kind: "read-error", message: (error as Error).message });
      }
      if (!response.headersSent) response.writeHead(503).end();
      else response.destroy();
    }
  }

  /**
   * One ranged GET of the object. Every read after the first is pinned to the first answer's
   * ETag (If-Match): bytes of two versions of an object replaced mid-read would make a corrupt
   * input; the store's 412 then fails the read, and the attempt reads the new version whole.
   */
  private async read(
    client: S3Client,
    bucket: string,
    key: string,
    range: string | undefined,
    readerGone: AbortSignal,
    signal: AbortSignal,
  ): Promise<GetObjectCommandOutput> {
    const uri = `s3://${bucket}/${key}`;
    const once = () =>
      withRetry(
        () =>
          client.send(
            new GetObjectCommand({
              Bucket: bucket,
              Key: key,
              ...(range ? { Range: range } : {}),
              ...(this.etag ? { IfMatch: this.etag } : {}),
            }),
            { abortSignal: readerGone },
          ),
        retryContext("stream", uri, { ...this.options.retry, signal }),
      ).catch((error: unknown) => {
        throw toStorageError(error, "stream", uri, signal);
      });
    const answer = await (this.options.wait ? this.options.wait.run(once, readerGone) : once());
    this.etag ??= answer.ETag;
    return answer;
  }

  /**
   * Sends a store answer's body to the reader, counting what went; resolves with the bytes
   * sent, or rejects with a PartialBodyError that says how many went before the store's body
   * broke off (its cause the store's error).
   */
  private async relayBody(
    body: StreamingBody,
    response: ServerResponse,
    readerGone: AbortSignal,
  ): Promise<number> {
    const stream = readableOf(body);
    if (readerGone.aborted) stream.destroy();
    else readerGone.addEventListener("abort", () => stream.destroy(), { once: true });
    let sent = 0;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        sent += chunk.length;
        this.measured.bytesServed += chunk.length;
        if (this.excessRead()) {
          response.destroy();
          throw new Error("the readers pulled more than the object's size allows");
        }
        if (!response.write(chunk)) await drained(response);
        if (readerGone.aborted) throw new Error("the reader hung up");
      }
    } catch (error) {
      throw new PartialBodyError(sent, error);
    }
    return sent;
  }

  private excessRead(): boolean {
    const objectBytes = this.measured.objectBytes;
    if (objectBytes === undefined) return false;
    const limit =
      (this.options.maxReadFactor ?? DEFAULT_MAX_READ_FACTOR) * objectBytes +
      (this.options.readAheadBytes ?? DEFAULT_READ_AHEAD_BYTES) * this.measured.requests;
    if (this.measured.bytesServed <= limit) return false;
    this.report({ kind: "excess-reads", bytesServed: this.measured.bytesServed, objectBytes });
    return true;
  }
}

type StreamingBody = NonNullable<GetObjectCommandOutput["Body"]>;

/** The store's body broke off after `bytes` of it reached the reader. */
class PartialBodyError extends Error {
  constructor(
    readonly bytes: number,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** Resolves once the reader has taken what was buffered, or has hung up. */
function drained(response: ServerResponse): Promise<void> {
  if (response.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.on("drain", done);
    response.on("close", done);
  });
}

function readableOf(body: StreamingBody): Readable {
  return body instanceof Readable ? body : Readable.fromWeb(body.transformToWebStream() as WebReadableStream);
}

/** A store answer's body nobody will read: destroyed, so its connection does not stay open. */
function dropBody(body: StreamingBody | undefined): void {
  if (body) readableOf(body).destroy();
}

function firstByteOf(contentRange: string | undefined): number | undefined {
  const first = contentRange === undefined ? undefined : /^bytes (\d+)-/.exec(contentRange)?.[1];
  return first === undefined ? undefined : Number(first);
}

function totalOf(contentRange: string | undefined): number | undefined {
  const total = contentRange === undefined ? undefined : /\/(\d+)$/.exec(contentRange)?.[1];
  return total === undefined ? undefined : Number(total);
}

/**
 * Whether the TCP connection from local port `peerPort` to the relay's `relayPort` belongs to
 * this process's user: /proc/net/tcp lists every socket with its owner's uid.
 */
async function ownedByThisUser(peerPort: number, relayPort: number): Promise<boolean> {
  const uid = process.getuid?.();
  if (uid === undefined) return false;
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, "0");
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await readFile(table, "utf8").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, remote, uidField] = [fields[1], fields[2], fields[7]];
      if (local?.endsWith(`:${hex(peerPort)}`) && remote?.endsWith(`:${hex(relayPort)}`)) {
        return Number(uidField) === uid;
      }
    }
  }
  return false;
}
