import { runManagerCommand } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET } from "@tjm/devstack/oidc-issuer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findClientMetadata, hashClientSecret } from "../../manager/src/identity/clients/index.ts";
import { verifyPassword } from "../../manager/src/identity/password-hashing.ts";
import { createProject } from "../../manager/src/projects/store.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";

const CLIENT_SECRET_HMAC_KEY = "client-secret-hmac-key-for-the-cli-tests-0123456789";
const PASSWORD = "violet tractor 42 umbrella";

let schema: Awaited<ReturnType<typeof createTestSchema>>;

beforeAll(async () => {
  schema = await createTestSchema(testServices().databaseUrl);
});
afterAll(() => schema?.drop());

function env(overrides: Record<string, string> = {}): Record<string, string> {
  const services = testServices();
  return {
    DATABASE_URL: services.databaseUrl,
    DATABASE_SCHEMA: schema.schema,
    NATS_URL: services.natsUrl,
    OIDC_ISSUER_URL: "http://127.0.0.1:1",
    // Not this file's subject: the built-in provider is tested in tests/provider/.
    PROVIDER_ENABLED: "false",
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
    CLIENT_SECRET_HMAC_KEY,
    NATS_AUTH: "none",
    // Never reached: these commands touch only the database.
    S3_ENDPOINT: "http://127.0.0.1:1",
    S3_ACCESS_KEY_ID: "unused",
    S3_SECRET_ACCESS_KEY: "unused",
    ...overrides,
  };
}

/**
 * Each case starts the real CLI (a Node process with tsx, 1–5 s on a loaded 2-core machine) up
 * to nine times in a row; the suite's default 30 s is too tight for that while other files run.
 */
const CLI_TEST_TIMEOUT_MS = 120_000;

const manager = (args: string[], stdin?: string, overrides?: Record<string, string>) =>
  runManagerCommand(args, env(overrides), stdin);

/** Every stored row of the identity tables as text: where a secret must never appear. */
async function storedText(): Promise<string> {
  const rows = await schema.sql<{ text: string }[]>`
    select row_to_json(t)::text as text from accounts t
    union all select row_to_json(t)::text from account_roles t
    union all select row_to_json(t)::text from oauth_clients t
    union all select row_to_json(t)::text from oauth_client_resources t
    union all select row_to_json(t)::text from audit_events t`;
  return rows.map((row) => row.text).join("\n");
}

describe("accounts create", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("stores the account with an argon2id hash of the stdin password, its roles and one audit row each", async () => {
    const result = await manager(
      ["accounts", "create", "--email", " Ada.Lovelace@Example.COM ", "--name", "Ada", "--role", "operator"],
      `${PASSWORD}\n`,
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0] ?? "");
    expect(created).toEqual({
      accountId: expect.any(String),
      email: "Ada.Lovelace@example.com",
      roles: ["operator"],
    });

    const [account] = await schema.sql<{ email: string; displayName: string; passwordHash: string }[]>`
      select email, display_name, password_hash from accounts where id = ${created.accountId}`;
    expect(account?.email).toBe("Ada.Lovelace@example.com");
    expect(account?.displayName).toBe("Ada");
    expect(account?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=65536,t=8,p=1\$/);
    expect(await verifyPassword(account?.passwordHash ?? "", PASSWORD)).toBe(true);
    expect(await verifyPassword(account?.passwordHash ?? "", `${PASSWORD}\n`)).toBe(false);
    expect(await schema.sql`select role from account_roles where account_id = ${created.accountId}`).toEqual([
      { role: "operator" },
    ]);
    const audit = await schema.sql`
      select event, actor_account_id, client_id, address, result, details from audit_events
      where details->>'accountId' = ${created.accountId} order by id`;
    expect(audit).toEqual([
      {
        event: "account.created",
        actorAccountId: null,
        clientId: null,
        address: null,
        result: "success",
        details: { via: "cli", accountId: created.accountId },
      },
      {
        event: "account.role-granted",
        actorAccountId: null,
        clientId: null,
        address: null,
        result: "success",
        details: { via: "cli", accountId: created.accountId, role: "operator" },
      },
    ]);
    expect(await storedText()).not.toContain(PASSWORD);
    expect(result.stderr).not.toContain(PASSWORD);
  });

  it("grants both roles, once each, and none when no --role is given", async () => {
    const both = await manager(
      [
        "accounts",
        "create",
        "--email",
        "grace@example.com",
        "--role",
        "client-admin",
        "--role",
        "operator",
        "--role",
        "operator",
      ],
      PASSWORD,
    );
    expect(both.code, both.stderr).toBe(0);
    expect(JSON.parse(both.stdout).roles).toEqual(["client-admin", "operator"]);
    const none = await manager(["accounts", "create", "--email", "edsger@example.com"], PASSWORD);
    expect(JSON.parse(none.stdout).roles).toEqual([]);
  });

  it("has no way to take the password from the command line: an unknown option fails with usage, without echoing it", async () => {
    for (const args of [
      ["--password", "Sup3r-Secret-Typed-Here"],
      ["--password=Sup3r-Secret-Typed-Here"],
      ["Sup3r-Secret-Typed-Here"],
    ]) {
      const result = await manager(["accounts", "create", "--email", "argv@example.com", ...args], PASSWORD);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(
        /^accounts create: (unknown option --password|unexpected argument at position 3)/,
      );
      expect(result.stderr).toContain("usage: manager");
      expect(result.stderr).not.toContain("Sup3r-Secret-Typed-Here");
    }
    expect(await schema.sql`select id from accounts where email = 'argv@example.com'`).toEqual([]);
  });

  it("refuses a password the policy refuses, naming every problem in English", async () => {
    const cases: [string, string][] = [
      [
        "qwerty\n",
        "the password must have at least 8 characters; the password is one of the most common passwords",
      ],
      ["password1\n", "the password is one of the most common passwords"],
      ["my-name-is-weakling-77\n", "the password contains the name of the e-mail address"],
      ["", "no password on stdin"],
      ["\n", "no password on stdin"],
      [`${PASSWORD}\nsecond line\n`, "stdin must hold the password on one line"],
    ];
    for (const [stdin, message] of cases) {
      const result = await manager(["accounts", "create", "--email", "weakling@example.com"], stdin);
      expect(result.code, stdin).toBe(2);
      expect(result.stderr.split("\n")[0]).toBe(`accounts create: ${message}`);
      expect(result.stdout).toBe("");
    }
    expect(await schema.sql`select id from accounts where email = 'weakling@example.com'`).toEqual([]);
  });

  it("refuses an e-mail address already taken, whatever its case, with exit 1", async () => {
    const first = await manager(["accounts", "create", "--email", "Linus@example.com"], PASSWORD);
    expect(first.code, first.stderr).toBe(0);
    const again = await manager(["accounts", "create", "--email", "LINUS@EXAMPLE.com"], PASSWORD);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(again.stderr.trim()).toBe("an account with the e-mail address 'LINUS@example.com' already exists");
    expect(
      await schema.sql`select count(*)::int as n from accounts where lower(email) = 'linus@example.com'`,
    ).toEqual([{ n: 1 }]);
  });

  it("refuses a missing or malformed e-mail and an unknown role with exit 2", async () => {
    const missing = await manager(["accounts", "create"], PASSWORD);
    expect(missing.code).toBe(2);
    expect(missing.stderr.split("\n")[0]).toBe("accounts create: --email is required");
    const bad = await manager(["accounts", "create", "--email", "no-at-sign", "--role", "root"], PASSWORD);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split("\n")[0]).toBe(
      "accounts create: --email 'no-at-sign' is not an e-mail address; --role 'root' is not one of operator, client-admin",
    );
  });
});

describe("accounts disable", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("disables the account, revokes its tokens, writes one audit row, and changes nothing the second time", async () => {
    const created = await manager(["accounts", "create", "--email", "katherine@example.com"], PASSWORD);
    expect(created.code, created.stderr).toBe(0);
    const { accountId } = JSON.parse(created.stdout);

    const first = await manager(["accounts", "disable", "--email", "KATHERINE@example.com"]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      accountId,
      disabledAt: expect.any(String),
      alreadyDisabled: false,
    });
    const [account] = await schema.sql`
      select disabled_at is not null as disabled, tokens_valid_after = disabled_at as revoked_with_it
      from accounts where id = ${accountId}`;
    expect(account).toEqual({ disabled: true, revokedWithIt: true });

    const again = await manager(["accounts", "disable", "--email", "katherine@example.com"]);
    expect(JSON.parse(again.stdout)).toMatchObject({ accountId, alreadyDisabled: true });
    expect(
      await schema.sql`select count(*)::int as n from audit_events where event = 'account.disabled' and actor_account_id = ${accountId}`,
    ).toEqual([{ n: 1 }]);
  });

  it("answers exit 1 for an unknown e-mail and exit 2 without one", async () => {
    const unknown = await manager(["accounts", "disable", "--email", "nobody@example.com"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe("no account has the e-mail address 'nobody@example.com'");
    const missing = await manager(["accounts", "disable"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.split("\n")[0]).toBe("accounts disable: --email is required");
  });
});

describe("clients create", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("prints a confidential client's secret once and stores only its HMAC, with metadata the provider reads", async () => {
    const { projectId } = await createProject(schema.sql, "Acme", "films");
    const result = await manager([
      "clients",
      "create",
      "--name",
      "Encoder API",
      "--grant",
      "client_credentials",
      "--resource",
      "tjm-api",
      "--project",
      projectId,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0] ?? "");
    expect(Object.keys(created)).toEqual(["clientId", "clientSecret"]);
    expect(created.clientSecret).toMatch(/^tjm_cs_[A-Za-z0-9_-]{43}$/);

    const [row] = await schema.sql<{ clientSecretHmac: string }[]>`
      select client_secret_hmac from oauth_clients where client_id = ${created.clientId}`;
    expect(row?.clientSecretHmac).toBe(hashClientSecret(created.clientSecret, CLIENT_SECRET_HMAC_KEY));
    expect(await findClientMetadata(schema.sql, created.clientId)).toEqual({
      client_id: created.clientId,
      client_name: "Encoder API",
      client_secret: row?.clientSecretHmac,
      redirect_uris: [],
      post_logout_redirect_uris: [],
      grant_types: ["client_credentials"],
      response_types: [],
      token_endpoint_auth_method: "client_secret_basic",
      first_party: false,
      authorization_version: 1,
      resource_scopes: { "tjm-api": [] },
      project_ids: [projectId],
      roles: [],
      user_ids: [],
      directory_sources: [],
    });
    const audit = await schema.sql`
      select event, actor_account_id, result, details from audit_events where client_id = ${created.clientId}`;
    expect(audit).toEqual([
      {
        event: "client.created",
        actorAccountId: null,
        result: "success",
        details: {
          via: "cli",
          grantTypes: ["client_credentials"],
          resources: ["tjm-api"],
          projectIds: [projectId],
          firstParty: false,
        },
      },
    ]);
    expect(await storedText()).not.toContain(created.clientSecret);
    expect(await storedText()).not.toContain(created.clientSecret.slice("tjm_cs_".length));
    expect(result.stderr).not.toContain(created.clientSecret);
  });

  it("creates a first-party interactive client and a public one without a secret", async () => {
    const firstParty = await manager([
      "clients",
      "create",
      "--name",
      "Admin console",
      "--redirect-uri",
      "https://admin.example.com/callback",
      "--grant",
      "authorization_code",
      "--grant",
      "refresh_token",
      "--resource",
      OPERATIONS_AUDIENCE,
      "--resource",
      "admin-console",
      "--first-party",
    ]);
    expect(firstParty.code, firstParty.stderr).toBe(0);
    const { clientId } = JSON.parse(firstParty.stdout);
    expect(await findClientMetadata(schema.sql, clientId)).toMatchObject({
      redirect_uris: ["https://admin.example.com/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      first_party: true,
      resource_scopes: { [OPERATIONS_AUDIENCE]: [], "admin-console": [] },
    });

    const publicClient = await manager(
      ["clients", "create", "--name", "CLI tool", "--redirect-uri", "http://127.0.0.1:8765/cb", "--public"],
      undefined,
      { CLIENT_SECRET_HMAC_KEY: "" },
    );
    expect(publicClient.code, publicClient.stderr).toBe(0);
    const created = JSON.parse(publicClient.stdout);
    expect(Object.keys(created)).toEqual(["clientId"]);
    const metadata = await findClientMetadata(schema.sql, created.clientId);
    expect(metadata).toMatchObject({
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code"],
    });
    expect(metadata).not.toHaveProperty("client_secret");
  });

  it("refuses bad redirect URIs, unknown resources and grants, and inconsistent bindings with exit 2", async () => {
    const refusals: [string[], string][] = [
      [
        ["--name", "x", "--redirect-uri", "http://app.example.com/cb"],
        "redirect URI 'http://app.example.com/cb' must use https (or http on localhost, 127.0.0.1 or [::1])",
      ],
      [["--name", "x", "--redirect-uri", "/cb"], "redirect URI '/cb' is not an absolute URL"],
      [
        ["--name", "x", "--redirect-uri", "https://a.example/cb#x"],
        "redirect URI 'https://a.example/cb#x' has a fragment",
      ],
      [["--name", "x"], "the authorization_code grant needs at least one --redirect-uri"],
      [
        ["--name", "x", "--grant", "client_credentials", "--resource", "billing"],
        `--resource 'billing' is not one of ${OPERATIONS_AUDIENCE}, account-portal, admin-console, tjm-api`,
      ],
      [
        ["--name", "x", "--grant", "password", "--redirect-uri", "https://a.example/cb"],
        "--grant 'password' is not one of authorization_code, refresh_token, client_credentials; --redirect-uri needs the authorization_code grant",
      ],
      [
        ["--name", "x", "--redirect-uri", "https://a.example/cb", "--project", crypto.randomUUID()],
        "a client bound to projects (--project) needs the client_credentials grant",
      ],
      [
        ["--name", "x", "--grant", "client_credentials", "--project", "00000000-0000-4000-8000-000000000000"],
        "no project has the id 00000000-0000-4000-8000-000000000000",
      ],
      [
        ["--name", "x", "--grant", "client_credentials", "--public"],
        "a public client (--public) cannot use the client_credentials grant: it has no secret",
      ],
    ];
    for (const [args, message] of refusals) {
      const result = await manager(["clients", "create", ...args]);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr.split("\n")[0]).toBe(`clients create: ${message}`);
    }
    expect(await schema.sql`select name from oauth_clients where name = 'x'`).toEqual([]);
  });

  it("names CLIENT_SECRET_HMAC_KEY when a confidential client is asked for without it", async () => {
    const result = await manager(
      ["clients", "create", "--name", "Keyless", "--grant", "client_credentials"],
      undefined,
      {
        CLIENT_SECRET_HMAC_KEY: "",
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("a confidential client needs CLIENT_SECRET_HMAC_KEY (32+ characters");
    expect(await schema.sql`select name from oauth_clients where name = 'Keyless'`).toEqual([]);
  });
});
