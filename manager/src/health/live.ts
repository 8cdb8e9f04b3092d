import { createRoute } from "@hono/zod-openapi";
import { errorResponses } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { HealthSchema } from "./schema.ts";

export const liveRoute = createRoute({
  method: "get",
  path: "/live",
  tags: ["health"],
  summary: "Liveness",
  operationId: "getLiveness",
  security: [],
  description: "Answers as long as the process serves HTTP; tests no dependency.",
  responses: {
    200: { description: "Alive", content: { "application/json": { schema: HealthSchema } } },
    // Every /api route refuses a body over MAX_BODY_BYTES, a probe's too.
    ...errorResponses("request.body_too_large"),
  },
});

export const live: AppRouteHandler<typeof liveRoute> = (c) =>
  c.json({ status: "ok" as const, info: {}, error: {}, details: {} }, 200);
