import { z } from "@hono/zod-openapi";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { Sql } from "../platform/db.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { pageQuery } from "../platform/query.ts";
import { jsonResponse } from "../platform/routes.ts";
import { type Project, ProjectListSchema } from "./schema.ts";
import { listProjects, type ProjectRow } from "./store.ts";

export const listProjectsRoute = operatorRoute({
  method: "get",
  path: "/projects",
  operationId: "listProjects",
  tags: ["projects"],
  summary: "List projects",
  description:
    "Every project jobs can be submitted to, by organization name then project name, with the total. Projects are created with `npm run manager -- projects create`.",
  request: { query: z.object(pageQuery) },
  responses: { 200: jsonResponse("A page of projects", ProjectListSchema) },
  errors: [],
});

const toProject = (row: ProjectRow): Project => ({
  id: row.id,
  name: row.name,
  organizationId: row.organizationId,
  organizationName: row.organizationName,
  createdAt: row.createdAt.toISOString(),
});

export const listProjectsHandler =
  (deps: { sql: Sql }): AppRouteHandler<typeof listProjectsRoute> =>
  async (c) => {
    const { limit, offset } = c.req.valid("query");
    const { rows, total } = await listProjects(deps.sql, limit, offset);
    return c.json({ items: rows.map(toProject), total, limit, offset }, 200);
  };
