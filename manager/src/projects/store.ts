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
