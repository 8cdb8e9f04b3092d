import { createRoute } from "@hono/zod-openapi";
import type { Broker } from "../platform/broker.ts";
import { type Sql, withTimeout } from "../platform/db.ts";
import { errorResponses } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { type DependencyStatus, type Health, HealthSchema } from "./schema.ts";

/** 3 s: the spec's database ping timeout; keep it below the orchestrator's probe timeout. */
export const PING_TIMEOUT_MS = 3000;

export interface ReadinessDeps {
  sql: Sql;
  broker: Broker;
}

export const readyRoute = createRoute({
  method: "get",
  path: "/ready",
  tags: ["health"],
  summary: "Readiness",
  operationId: "getReadiness",
  security: [],
  description: `Pings PostgreSQL and NATS (each within ${PING_TIMEOUT_MS} ms). 503 when either is unavailable, naming it under error.`,
  responses: {
    200: { description: "Both dependencies up", content: { "application/json": { schema: HealthSchema } } },
    // Every /api route refuses a body over MAX_BODY_BYTES, a probe's too.
    ...errorResponses("request.body_too_large"),
    503: {
      description: "A dependency is down",
      content: {
        "application/json": {
          schema: HealthSchema,
          example: {
            status: "error",
            info: { broker: { status: "up" } },
            error: { database: { status: "down", message: "PostgreSQL did not answer within 3000 ms" } },
            details: {
              database: { status: "down", message: "PostgreSQL did not answer within 3000 ms" },
              broker: { status: "up" },
            },
          },
        },
      },
    },
  },
});

async function check(probe: () => Promise<unknown>): Promise<DependencyStatus> {
  try {
    await probe();
    return { status: "up" };
  } catch (err) {
    return { status: "down", message: err instanceof Error ? err.message : String(err) };
  }
}

export const ready =
  (deps: ReadinessDeps): AppRouteHandler<typeof readyRoute> =>
  async (c) => {
    const [database, broker] = await Promise.all([
      check(() => withTimeout(deps.sql`select 1`.execute(), PING_TIMEOUT_MS, "PostgreSQL")),
      check(() => deps.broker.ping(PING_TIMEOUT_MS)),
    ]);
    const details = { database, broker };
    const health: Health = { status: "ok", info: {}, error: {}, details };
    for (const [name, status] of Object.entries(details)) {
      if (status.status === "up") health.info[name] = status;
      else health.error[name] = status;
    }
    if (Object.keys(health.error).length > 0) return c.json({ ...health, status: "error" as const }, 503);
    return c.json(health, 200);
  };
