/**
 * Closed-loop load: N callers each repeat one operation back to back for a fixed time.
 * The same loop drives HTTP, pg-boss and raw SQL so their numbers are comparable.
 */
import http from "node:http";
import { performance } from "node:perf_hooks";
import { percentile } from "./stats.ts";

export interface LoadOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

export interface LoadResult {
  concurrency: number;
  succeeded: number;
  failed: number;
  firstError: string | undefined;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** One of the things compared at each concurrency level; it stays up between levels. */
export interface Contender {
  measure(options: LoadOptions): Promise<LoadResult>;
  stop(): Promise<void>;
}

/** `operation` is told which caller (0 … concurrency - 1) runs it, so callers can be pinned to targets. */
export async function closedLoop(
  operation: (caller: number) => Promise<unknown>,
  options: LoadOptions,
): Promise<LoadResult> {
  let failed = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];
  const callers = (until: number, measured: boolean) =>
    Promise.all(
      Array.from({ length: options.concurrency }, async (_, caller) => {
        while (performance.now() < until) {
          const started = performance.now();
          try {
            await operation(caller);
            if (measured) latencies.push(performance.now() - started);
          } catch (err) {
            if (!measured) continue;
            failed++;
            firstError ??= err instanceof Error ? err.message : String(err);
          }
        }
      }),
    );

  await callers(performance.now() + options.warmupMs, false);
  const started = performance.now();
  await callers(started + options.durationMs, true);
  // Operations started before the deadline finish after it; they count, so does their time.
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    concurrency: options.concurrency,
    succeeded: latencies.length,
    failed,
    firstError,
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
  };
}

export interface HttpResponse {
  status: number;
  body: string;
}

/**
 * node:http with one keep-alive socket per caller: lighter than fetch, so at 64 callers the
 * load generator takes less of the two cores the Manager and PostgreSQL also need.
 */
export class HttpClient {
  private readonly agent: http.Agent;
  private readonly target: URL;

  /** `token` is sent as a bearer token; without it, `headers` of each request authenticate it. */
  constructor(
    baseUrl: string,
    private readonly token: string | undefined,
    maxSockets: number,
  ) {
    this.target = new URL(baseUrl);
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  /** A body is JSON unless `headers` name another content type. */
  request(
    method: "GET" | "POST",
    path: string,
    body?: Buffer,
    headers: http.OutgoingHttpHeaders = {},
  ): Promise<HttpResponse> {
    const sent: http.OutgoingHttpHeaders = {
      ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
      ...(body ? { "content-type": "application/json", "content-length": body.length } : {}),
      ...headers,
    };
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          agent: this.agent,
          host: this.target.hostname,
          port: this.target.port,
          method,
          path,
          headers: sent,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
          );
        },
      );
      request.on("error", reject);
      request.end(body);
    });
  }

  /** Rejects unless the answer has the expected status, so errors are counted, not timed. */
  async expect(
    status: number,
    method: "GET" | "POST",
    path: string,
    body?: Buffer,
    headers?: http.OutgoingHttpHeaders,
  ): Promise<HttpResponse> {
    const response = await this.request(method, path, body, headers);
    if (response.status !== status)
      throw new Error(`${method} ${path} answered ${response.status}: ${response.body.slice(0, 300)}`);
    return response;
  }

  close(): void {
    this.agent.destroy();
  }
}
