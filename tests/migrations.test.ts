import { runScript } from "@tjm/devstack/manager-process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createSql, type Sql } from "../manager/src/platform/db.ts";
import { loadMigrations, migrate, pendingMigrations } from "../manager/src/platform/migrations.ts";
import { commandEnv, testServices } from "./harness/manager.ts";

let admin: Sql;
const schemas: string[] = [];

function freshSchemaName(): string {
  const schema = `${inject("schemaPrefix")}mig_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  schemas.push(schema);
  return schema;
}

beforeAll(() => {
  admin = createSql({ url: testServices().databaseUrl, schema: "public", poolMax: 12 });
});
afterAll(async () => {
  for (const schema of schemas) await admin`drop schema if exists ${admin(schema)} cascade`;
  await admin.end();
});

describe("migrations", () => {
  it("apply once; a second run finds nothing to do", async () => {
    const schema = freshSchemaName();
    const migrations = await loadMigrations();
    expect((await migrate(admin, schema, migrations)).map((m) => m.version)).toEqual(
      migrations.map((m) => m.version),
    );
    expect(await migrate(admin, schema, migrations)).toEqual([]);
    expect(await pendingMigrations(admin, schema, migrations)).toEqual([]);
    const recorded =
      await admin`select version, checksum from ${admin(schema)}.schema_migrations order by version`;
    expect(recorded.map((row) => row.checksum)).toEqual(migrations.map((m) => m.checksum));
  });

  it("each protocol bump takes over the jobs no Worker holds yet: QUEUED jobs of protocol 1 become 2, then 3; others keep theirs", async () => {
    const schema = freshSchemaName();
    const migrations = await loadMigrations();
    const upgrade = migrations.findIndex((m) => m.name === "protocol_version_2");
    expect(upgrade).toBeGreaterThan(0);
    // The job triggers name their tables unqualified: insert on a client whose search_path is the schema.
    const sql = createSql({ url: testServices().databaseUrl, schema, poolMax: 1 });
    await migrate(sql, schema, migrations.slice(0, upgrade));
    const [org, project] = [crypto.randomUUID(), crypto.randomUUID()];
    await sql`insert into organizations (id, name) values (${org}, 'acme')`;
    await sql`insert into projects (id, organization_id, name) values (${project}, ${org}, 'p')`;
    const jobs = {
      queued: crypto.randomUUID(),
      running: crypto.randomUUID(),
      completed: crypto.randomUUID(),
    };
    for (const [name, id] of Object.entries(jobs)) {
      const attemptId = crypto.randomUUID();
      // The job's current attempt is a deferred foreign key: both rows in one transaction.
      await sql.begin(async (tx) => {
        await tx`
          insert into jobs (id, organization_id, project_id, state, priority, worker_pool, required_capabilities,
            execution_plan, protocol_version, current_attempt_id, last_fencing_token, queued_at, deadline_at,
            created_at, updated_at)
          values (${id}, ${org}, ${project}, ${name.toUpperCase()}, 0, 'cpu', '{}', '{}', 1, ${attemptId}, 1,
            now(), now() + interval '1 day', now(), now())`;
        await tx`
          insert into attempts (id, job_id, attempt_number, state, fencing_token, created_at, updated_at)
          values (${attemptId}, ${id}, 1, 'CREATED', 1, now(), now())`;
      });
    }
    const versions = async () => {
      const rows = await sql<
        { id: string; protocolVersion: number }[]
      >`select id, protocol_version from jobs`;
      const versionOf = (id: string) => rows.find((row) => row.id === id)?.protocolVersion;
      return [versionOf(jobs.queued), versionOf(jobs.running), versionOf(jobs.completed)];
    };
    const third = migrations.findIndex((m) => m.name === "protocol_version_3");
    expect(third).toBeGreaterThan(upgrade);
    await migrate(sql, schema, migrations.slice(0, third));
    expect(await versions()).toEqual([2, 1, 1]);
    await migrate(sql, schema, migrations);
    expect(await versions()).toEqual([3, 1, 1]);
    await sql.end();
  });

  it("never collide: of eight concurrent migrators exactly one applies each migration", async () => {
    const schema = freshSchemaName();
    const migrations = await loadMigrations();
    const clients = Array.from({ length: 8 }, () =>
      createSql({ url: testServices().databaseUrl, schema: "public", poolMax: 1 }),
    );
    try {
      const results = await Promise.all(clients.map((sql) => migrate(sql, schema, migrations)));
      expect(results.flat().map((m) => m.version)).toEqual(migrations.map((m) => m.version));
    } finally {
      await Promise.all(clients.map((sql) => sql.end()));
    }
  });

  it("refuse to continue when an applied migration was edited", async () => {
    const schema = freshSchemaName();
    const migrations = await loadMigrations();
    await migrate(admin, schema, migrations);
    const edited = migrations.map((m, i) => (i === 0 ? { ...m, checksum: "0".repeat(64) } : m));
    await expect(pendingMigrations(admin, schema, edited)).rejects.toThrow(
      /was changed after it was applied/,
    );
  });

  it("are applied by `npm run migrate`, and the Manager refuses to start until they are", async () => {
    const schema = freshSchemaName();
    const refused = await runScript(["manager"], commandEnv(schema));
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(
      `The database schema "${schema}" has 21 pending migration(s): 0001_jobs, 0002_enrollment_tokens, 0003_workers, 0004_execution, 0005_installation, 0006_cancel_sends, 0007_identity, 0008_protocol_version_2, 0009_provider, 0010_promoted_outputs, 0011_identifier_keys, 0012_message_outbox, 0013_backchannel_logout_outbox, 0014_account_profile, 0015_identifier_changes, 0016_session_activity, 0017_password_recovery, 0018_mfa_factors, 0019_client_management, 0020_protocol_version_3, 0021_attempt_input_wait.`,
    );
    expect(refused.stderr).toContain("run 'npm run migrate'");

    const migrated = await runScript(["migrate"], commandEnv(schema));
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stderr).toContain("migrations applied");
    // Two process starts, each loading the Manager's code: seconds apiece on two busy cores.
  }, 60_000);
});

describe("`npm run manager -- projects create`", () => {
  let schema: string;
  beforeAll(async () => {
    schema = freshSchemaName();
    await migrate(admin, schema, await loadMigrations());
  });

  it("prints exactly one JSON line with the new ids", async () => {
    const result = await runScript(
      ["manager", "--", "projects", "create", "--org", "Acme Media", "--name", "films"],
      commandEnv(schema),
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const ids = JSON.parse(lines[0] ?? "");
    expect(Object.keys(ids)).toEqual(["organizationId", "projectId"]);
    const [project] =
      await admin`select p.organization_id from ${admin(schema)}.projects p where p.id = ${ids.projectId}`;
    expect(project?.organizationId).toBe(ids.organizationId);

    const second = await runScript(
      ["manager", "--", "projects", "create", "--org", "Acme Media", "--name", "series"],
      commandEnv(schema),
    );
    expect(JSON.parse(second.stdout).organizationId).toBe(ids.organizationId);
  });

  it("refuses a duplicate project and missing flags with a clear message", async () => {
    await runScript(
      ["manager", "--", "projects", "create", "--org", "dup", "--name", "same"],
      commandEnv(schema),
    );
    const duplicate = await runScript(
      ["manager", "--", "projects", "create", "--org", "dup", "--name", "same"],
      commandEnv(schema),
    );
    expect(duplicate.code).toBe(1);
    expect(duplicate.stdout).toBe("");
    expect(duplicate.stderr).toContain("project 'same' already exists in organization 'dup'");

    const missing = await runScript(
      ["manager", "--", "projects", "create", "--org", "dup"],
      commandEnv(schema),
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("projects create needs --org NAME and --name NAME");
  });

  it("lists every missing or invalid setting at once", async () => {
    const result = await runScript(["manager"], {
      DATABASE_URL: "mysql://x",
      PORT: "99999",
      NATS_URL: "",
      OIDC_ISSUER_URL: "",
      OIDC_OPERATIONS_ADMIN_AUDIENCE: "",
      ENROLLMENT_TOKEN_SECRET: "too short",
    });
    expect(result.code).toBe(2);
    for (const name of [
      "DATABASE_URL",
      "PORT",
      "NATS_URL",
      "OIDC_ISSUER_URL",
      "OIDC_OPERATIONS_ADMIN_AUDIENCE",
      "ENROLLMENT_TOKEN_SECRET",
    ]) {
      expect(result.stderr).toContain(`${name}:`);
    }
  });
});
