import { z } from "@hono/zod-openapi";

const DependencyStatusSchema = z
  .object({
    status: z.enum(["up", "down"]).openapi({ example: "up" }),
    message: z.string().optional().openapi({
      description: "Why the dependency is down",
      example: "PostgreSQL did not answer within 3000 ms",
    }),
  })
  .openapi("DependencyStatus");

export const HealthSchema = z
  .object({
    status: z.enum(["ok", "error"]).openapi({ example: "ok" }),
    info: z.record(z.string(), DependencyStatusSchema).openapi({ description: "Dependencies that are up" }),
    error: z
      .record(z.string(), DependencyStatusSchema)
      .openapi({ description: "Dependencies that are down" }),
    details: z
      .record(z.string(), DependencyStatusSchema)
      .openapi({ description: "Every dependency checked" }),
  })
  .openapi("Health");

export type Health = z.infer<typeof HealthSchema>;
export type DependencyStatus = z.infer<typeof DependencyStatusSchema>;
