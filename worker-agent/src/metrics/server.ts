/**
 * GET /metrics on a port of its own (WORKER_METRICS_HOST:WORKER_METRICS_PORT). node:http, which
 * Bun implements, so the same server runs under the agent and in tests on Node. No
 * authentication: it binds to loopback unless told otherwise, and what it shows is counts.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { WorkerMetrics } from "./worker-metrics.ts";

export class MetricsServer {
  private constructor(private readonly server: Server) {}

  /** Listens; rejects when the address cannot be bound (in use, not local). */
  static async listen(metrics: WorkerMetrics, host: string, port: number): Promise<MetricsServer> {
    const server = createServer((request, response) => {
      const path = (request.url ?? "/").split("?")[0];
      if (path !== "/metrics") {
        response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
        return;
      }
      if (request.method !== "GET" && request.method !== "HEAD") {
        response.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" });
        response.end("method not allowed\n");
        return;
      }
      metrics.text().then(
        (text) => {
          response.writeHead(200, { "content-type": metrics.contentType });
          response.end(request.method === "HEAD" ? undefined : text);
        },
        () => {
          response.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("internal error\n");
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return new MetricsServer(server);
  }

  get address(): AddressInfo {
    return this.server.address() as AddressInfo;
  }

  /** Stops listening and drops kept-alive scrape connections, which would hold close() open. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections?.();
    });
  }
}
