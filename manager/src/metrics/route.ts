/**
 * GET /metrics: on the API port by default, or alone on METRICS_HOST:METRICS_PORT. Not an
 * OpenAPI route: Prometheus text is no part of the JSON API. With METRICS_BEARER_TOKEN set, a
 * scrape presents it on either port.
 */
import { sha256 } from "@oslojs/crypto/sha2";
import { constantTimeEqual } from "@oslojs/crypto/subtle";
import type { Logger } from "@tjm/platform";
import type { Context } from "hono";
import { ApiError, answerError, createErrorHandler, routeNotFound } from "../platform/errors.ts";
import {
  closeWhenBodyUnread,
  createRouter,
  limitBody,
  nonPageHeaders,
  requestId,
  SMALL_BODY_MAX_BYTES,
} from "../platform/http.ts";
import type { ManagerMetrics } from "./manager-metrics.ts";

type Router = ReturnType<typeof createRouter>;

const encoder = new TextEncoder();
const digest = (text: string) => sha256(encoder.encode(text));

/**
 * Whether the request carries the token. Digests are compared, so the comparison takes the
 * same time whatever the length or content of what was sent.
 */
function presentsToken(authorization: string | undefined, expected: Uint8Array): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
  const matches = constantTimeEqual(digest(match?.[1] ?? ""), expected);
  return match !== null && matches;
}

function metricsHandler(metrics: ManagerMetrics) {
  const expected = metrics.bearerToken === undefined ? undefined : digest(metrics.bearerToken);
  return async (c: Context) => {
    if (expected && !presentsToken(c.req.header("authorization"), expected)) {
      c.header("www-authenticate", 'Bearer realm="metrics"');
      const refusal = new ApiError(
        "auth.token_invalid",
        "Scraping /metrics needs the bearer token METRICS_BEARER_TOKEN",
      );
      return answerError(c, refusal);
    }
    const { contentType, body } = await metrics.scrape();
    return c.body(body, 200, { "content-type": contentType });
  };
}

/**
 * What the API app mounts (app.ts calls it before authentication): the submit timer, and the
 * route unless metrics are off or served on their own port.
 */
export function registerMetrics(app: Router, metrics: ManagerMetrics | undefined): void {
  if (!metrics || metrics.endpoint === "none") return;
  app.use("/api/v1/operations/jobs", metrics.timeSubmit);
  if (metrics.endpoint === "api-port") app.get("/metrics", metricsHandler(metrics));
}

/** The app the entrypoint serves on METRICS_HOST:METRICS_PORT: /metrics and nothing else. */
export function metricsApp(metrics: ManagerMetrics, logger: Logger): Router {
  const app = createRouter();
  app.onError(createErrorHandler(logger));
  app.notFound(routeNotFound);
  app.use("*", requestId);
  app.use("*", nonPageHeaders);
  app.use("*", closeWhenBodyUnread);
  app.use("*", limitBody(SMALL_BODY_MAX_BYTES));
  app.get("/metrics", metricsHandler(metrics));
  return app;
}
