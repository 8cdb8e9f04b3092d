import { createRoute } from "@hono/zod-openapi";
import type { AppRouteHandler } from "../platform/http.ts";
import { HealthSchema } from "./schema.ts";

export const liveRoute = createRoute({
  method: "get",
  path: "/live",
  tags: ["health"],
  summary: "Liveness",
  description: "Answers as long as the process serves HTTP; tests no dependency.",
  responses: { 200: { description: "Alive", content: { "application/json": { schema: HealthSchema } } } },
});

export const live: AppRouteHandler<typeof liveRoute> = (c) =>
  c.json({ status: "ok" as const, info: {}, error: {}, details: {} }, 200);
