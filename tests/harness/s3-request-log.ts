/**
 * A proxy in front of s3rver that records every request and its answer, for tests that check
 * what reached object storage (one promotion per destination, say). A test may also hold a
 * request before it is forwarded (`intercept`: a fault injected at an exact point of a
 * Worker's upload), and take the store down and up again on the same port (`down`/`up`:
 * connections refused, open ones cut, as when the store's host goes away).
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request that reached the proxy, and how the store answered. */
export interface S3Request {
  method: string;
  /** /bucket/key, decoded, without the query. */
  path: string;
  query: URLSearchParams;
  /** The x-amz-copy-source header: set on a copy (a promotion). */
  copySource: string | undefined;
  /** The Range header: set on a ranged GET (a Worker streaming its input). */
  range: string | undefined;
  /** The If-Match header: the version a read is pinned to. */
  ifMatch: string | undefined;
  /** The store's status; 0 while unanswered or when the exchange was cut. */
  status: number;
  at: number;
}

/**
 * Runs before a request is forwarded; the request waits for it. Throwing cuts the request's
 * connection (the client sees a network error).
 */
export type S3Interceptor = (request: Omit<S3Request, "status">) => Promise<void> | void;

export interface S3RequestLog {
  /** The proxy's endpoint: give it to the Manager and, through leases, to the Workers. */
  endpoint: string;
  requests: S3Request[];
  /**
   * Successful writes of the object at `path`: single-request puts and copies (PUT), and
   * completed multipart uploads or copies (POST ?uploadId), each answered 2xx.
   */
  writesTo(path: string): S3Request[];
  intercept(interceptor: S3Interceptor | undefined): void;
  /** Stops listening and cuts every open connection: the store is unreachable until `up`. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startS3RequestLog(target: number): Promise<S3RequestLog> {
  const requests: S3Request[] = [];
  let interceptor: S3Interceptor | undefined;
  const sockets = new Set<Socket>();
  const server: Server = createServer(async (incoming, answer) => {
    const url = new URL(incoming.url ?? "/", "http://proxy");
    const copySource = incoming.headers["x-amz-copy-source"];
    const entry: S3Request = {
      method: incoming.method ?? "GET",
      path: decodeURIComponent(url.pathname),
      query: url.searchParams,
      copySource: typeof copySource === "string" ? decodeURIComponent(copySource) : undefined,
      range: incoming.headers.range,
      ifMatch: incoming.headers["if-match"],
      status: 0,
      at: Date.now(),
    };
    requests.push(entry);
    try {
      await interceptor?.(entry);
    } catch {
      incoming.destroy();
      answer.destroy();
      return;
    }
    const upstream = request(
      {
        host: "127.0.0.1",
        port: target,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (response) => {
        entry.status = response.statusCode ?? 0;
        answer.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(answer);
      },
    );
    upstream.on("error", () => answer.destroy());
    incoming.pipe(upstream);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  const stopListening = async () => {
    const closed = new Promise((resolve) => server.close(resolve));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    writesTo: (path) =>
      requests.filter(
        (entry) =>
          entry.path === path &&
          entry.status >= 200 &&
          entry.status < 300 &&
          ((entry.method === "PUT" && !entry.query.has("partNumber")) ||
            (entry.method === "POST" && entry.query.has("uploadId"))),
      ),
    intercept(next) {
      interceptor = next;
    },
    down: stopListening,
    up: () => listen(port),
    close: stopListening,
  };
}
