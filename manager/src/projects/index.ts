import type { Sql } from "../platform/db.ts";
import { createRouter } from "../platform/http.ts";
import { listProjectsHandler, listProjectsRoute } from "./list.ts";

/** Projects as operators see them: mounted under /api/v1/operations behind operator auth. */
export function projectsOperationsApp(deps: { sql: Sql }) {
  return createRouter().openapi(listProjectsRoute, listProjectsHandler(deps));
}
