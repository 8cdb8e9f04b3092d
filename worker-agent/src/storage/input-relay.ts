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
 * It also measures what a decision to stream needs: whether the store honours Range
 * requests, how many bytes the readers pulled against the object's size (a badly interleaved
 * input makes ffmpeg seek back and forth, pulling more than the file), and whether a read
 * from the store failed. The caller falls back to a download on any of these.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { type RetryOptions, retryContext, splitS3Uri, withRetry } from "@tjm/storage";

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
  /**
   * Each read is retried like a download's request (the Worker's storage retry policy) before
   * the relay answers 503; ffmpeg's own reconnects then ask again, so a stream rides out an
   * outage several budgets long before the attempt falls back to a download.
   */
  retry?: Omit<RetryOptions, "signal">;
  /** The attempt's: once aborted, reads in flight stop and the relay closes. */
  signal?: AbortSignal;
}

const DEFAULT_MAX_READ_FACTOR = 2;
const DEFAULT_READ_AHEAD_BYTES = 4 * 1024 * 1024;

export class InputRelay {
  private problemSeen: RelayProblem | undefined;
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
    if (this.problemSeen && this.problemSeen.kind !== "read-error") {
      response.writeHead(503).end();
      return;
    }
    this.measured.requests++;
    const range = request.headers.range;
    // Aborted when the reader hangs up (ffmpeg seeking elsewhere): no read error, then.
    const readerGone = new AbortController();
    response.on("close", () => readerGone.abort());
    let storeFailure: Error | undefined;
    try {
      const answer = await withRetry(
        () =>
          client.send(
            new GetObjectCommand({ Bucket: bucket, Key: key, ...(range ? { Range: range } : {}) }),
            { abortSignal: readerGone.signal },
          ),
        retryContext("stream", `s3://${bucket}/${key}`, {
          ...this.options.retry,
          signal: this.options.signal
            ? AbortSignal.any([readerGone.signal, this.options.signal])
            : readerGone.signal,
        }),
      );
      const total = totalOf(answer.ContentRange) ?? (range ? undefined : answer.ContentLength);
      if (total !== undefined) this.measured.objectBytes = total;
      if (range && answer.ContentRange === undefined) {
        // The store sent the whole object for a ranged request: ffmpeg could not seek.
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
        response.end();
        return;
      }
      const body =
        answer.Body instanceof Readable
          ? answer.Body
          : Readable.fromWeb(answer.Body.transformToWebStream() as WebReadableStream);
      body.on("error", (error: Error) => {
        if (!readerGone.signal.aborted && !this.options.signal?.aborted) storeFailure ??= error;
      });
      body.on("data", (chunk: Buffer) => {
        this.measured.bytesServed += chunk.length;
        const objectBytes = this.measured.objectBytes;
        const limit =
          (this.options.maxReadFactor ?? DEFAULT_MAX_READ_FACTOR) * (objectBytes ?? 0) +
          (this.options.readAheadBytes ?? DEFAULT_READ_AHEAD_BYTES) * this.measured.requests;
        if (objectBytes !== undefined && this.measured.bytesServed > limit) {
          this.report({ kind: "excess-reads", bytesServed: this.measured.bytesServed, objectBytes });
          response.destroy();
        }
      });
      await pipeline(body, response);
    } catch (error) {
      const failure = storeFailure ?? (readerGone.signal.aborted ? undefined : (error as Error));
      if (failure !== undefined && this.problem?.kind !== "excess-reads") {
        this.report({ kind: "read-error", message: failure.message });
      }
      if (!response.headersSent) response.writeHead(503).end();
      else response.destroy();
    }
  }
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
