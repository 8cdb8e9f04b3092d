import { z } from "@hono/zod-openapi";
import { pageOf } from "../platform/query.ts";

export const ProjectSchema = z
  .object({
    id: z.uuid().openapi({ example: "2c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f" }),
    name: z.string().openapi({ example: "trailers" }),
    organizationId: z.uuid().openapi({ example: "6f1c2a90-1d7e-4f39-8b7a-1f0e2d3c4b5a" }),
    organizationName: z.string().openapi({ example: "studio" }),
    createdAt: z.iso.datetime().openapi({ example: "2026-11-21T10:00:00.000Z" }),
  })
  .openapi("Project");

export const ProjectListSchema = pageOf("ProjectList", ProjectSchema, "Projects in the installation");

export type Project = z.infer<typeof ProjectSchema>;
