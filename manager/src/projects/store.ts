import type { Sql } from "../platform/db.ts";
import { isPgError, pgErrorCode } from "../platform/db.ts";

export class ProjectExistsError extends Error {}

/**
 * Finds or creates the organization by name, then creates the project in it. A second
 * project with the same name in the same organization is refused.
 */
export async function createProject(
  sql: Sql,
  organizationName: string,
  projectName: string,
): Promise<{ organizationId: string; projectId: string }> {
  try {
    return await sql.begin(async (tx) => {
      const [organization] = await tx<{ id: string }[]>`
        insert into organizations (id, name) values (${crypto.randomUUID()}, ${organizationName})
        on conflict (name) do update set name = excluded.name
        returning id`;
      const organizationId = (organization as { id: string }).id;
      const [project] = await tx<{ id: string }[]>`
        insert into projects (id, organization_id, name) values (${crypto.randomUUID()}, ${organizationId}, ${projectName})
        returning id`;
      return { organizationId, projectId: (project as { id: string }).id };
    });
  } catch (err) {
    if (isPgError(err, pgErrorCode.uniqueViolation)) {
      throw new ProjectExistsError(
        `project '${projectName}' already exists in organization '${organizationName}'`,
      );
    }
    throw err;
  }
}

export interface ProjectRow {
  id: string;
  name: string;
  organizationId: string;
  organizationName: string;
  createdAt: Date;
}

/** By organization name, then project name, with the number of projects. */
export async function listProjects(
  sql: Sql,
  limit: number,
  offset: number,
): Promise<{ rows: ProjectRow[]; total: number }> {
  const [rows, [count]] = await Promise.all([
    sql<ProjectRow[]>`
      select p.id, p.name, p.organization_id, o.name as organization_name, p.created_at
      from projects p join organizations o on o.id = p.organization_id
      order by o.name, p.name, p.id limit ${limit} offset ${offset}`,
    sql<{ total: number }[]>`select count(*)::int as total from projects`,
  ]);
  return { rows, total: count?.total ?? 0 };
}
