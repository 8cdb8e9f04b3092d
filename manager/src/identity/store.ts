/**
 * Accounts and OAuth clients as the command line creates them, each with its audit rows in the
 * same transaction: a creation is never stored without its trail, nor the trail without it.
 */
import { isPgError, pgErrorCode, type Sql } from "../platform/db.ts";
import { emailKey } from "./identifiers.ts";

export const ACCOUNT_ROLES = ["operator", "client-admin"] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

export class AccountExistsError extends Error {}
export class UnknownAccountError extends Error {}
export class UnknownProjectError extends Error {}

/** Who acted, in an audit row's details, when no account did: the operator at the command line. */
const VIA_CLI = { via: "cli" } as const;

export interface NewAccount {
  email: string;
  displayName: string;
  passwordHash: string;
  roles: AccountRole[];
}

/**
 * Inserts the account and its roles; one audit row for the account and one per role. The address
 * is stored as given and unique by its key: another spelling of it is the same account.
 */
export async function createAccount(
  sql: Sql,
  account: NewAccount,
): Promise<{ accountId: string; email: string; roles: AccountRole[] }> {
  try {
    return await sql.begin(async (tx) => {
      const [row] = await tx<{ id: string }[]>`
        insert into accounts (email, email_key, display_name, password_hash)
        values (${account.email}, ${emailKey(account.email)}, ${account.displayName}, ${account.passwordHash})
        returning id`;
      const accountId = (row as { id: string }).id;
      await tx`
        insert into audit_events (event, result, details)
        values ('account.created', 'success', ${tx.json({ ...VIA_CLI, accountId })})`;
      for (const role of account.roles) {
        await tx`insert into account_roles (account_id, role) values (${accountId}, ${role})`;
        await tx`
          insert into audit_events (event, result, details)
          values ('account.role-granted', 'success', ${tx.json({ ...VIA_CLI, accountId, role })})`;
      }
      return { accountId, email: account.email, roles: account.roles };
    });
  } catch (err) {
    if (isPgError(err, pgErrorCode.uniqueViolation)) {
      throw new AccountExistsError(`an account with the e-mail address '${account.email}' already exists`);
    }
    throw err;
  }
}

/**
 * Disables an account and revokes its tokens: tokens_valid_after moves to now, so every token
 * it holds is refused on the next request on every replica, and its refresh tokens stop working.
 * Disabling a disabled account changes nothing and writes no second row.
 */
export async function disableAccount(
  sql: Sql,
  email: string,
): Promise<{ accountId: string; disabledAt: string; alreadyDisabled: boolean }> {
  return sql.begin(async (tx) => {
    const [account] = await tx<{ id: string; disabledAt: Date | null }[]>`
      select id, disabled_at from accounts where email_key = ${emailKey(email)} for update`;
    if (!account) throw new UnknownAccountError(`no account has the e-mail address '${email}'`);
    if (account.disabledAt) {
      return { accountId: account.id, disabledAt: account.disabledAt.toISOString(), alreadyDisabled: true };
    }
    const [row] = await tx<{ disabledAt: Date }[]>`
      update accounts set disabled_at = now(), tokens_valid_after = now(), updated_at = now()
      where id = ${account.id} returning disabled_at`;
    await tx`
      insert into audit_events (event, actor_account_id, result, details)
      values ('account.disabled', ${account.id}, 'success', ${tx.json({ ...VIA_CLI, accountId: account.id })})`;
    return {
      accountId: account.id,
      disabledAt: (row as { disabledAt: Date }).disabledAt.toISOString(),
      alreadyDisabled: false,
    };
  });
}

export interface NewClient {
  clientId: string;
  name: string;
  /** HMAC of the generated secret; null for a public client. */
  clientSecretHmac: string | null;
  tokenEndpointAuthMethod: "client_secret_basic" | "none";
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
  backchannelLogoutUri?: string | undefined;
  grantTypes: string[];
  responseTypes: string[];
  firstParty: boolean;
  resources: string[];
  projectIds: string[];
}

/** Inserts the client with its resources (no scopes yet) and projects, and one audit row. */
export async function createClient(sql: Sql, client: NewClient): Promise<void> {
  await sql.begin(async (tx) => {
    const missing = await tx<{ id: string }[]>`
        select id::text from unnest(${client.projectIds}::uuid[]) as wanted (id)
        where not exists (select from projects p where p.id = wanted.id)`;
    if (missing.length > 0) {
      throw new UnknownProjectError(`no project has the id ${missing.map((m) => m.id).join(", ")}`);
    }
    const [row] = await tx<{ id: string }[]>`
        insert into oauth_clients (client_id, client_secret_hmac, name, redirect_uris,
          post_logout_redirect_uris, backchannel_logout_uri, grant_types, response_types,
          token_endpoint_auth_method, first_party)
        values (${client.clientId}, ${client.clientSecretHmac}, ${client.name}, ${client.redirectUris},
          ${client.postLogoutRedirectUris ?? []}, ${client.backchannelLogoutUri ?? null},
          ${client.grantTypes}, ${client.responseTypes}, ${client.tokenEndpointAuthMethod}, ${client.firstParty})
        returning id`;
    const id = (row as { id: string }).id;
    for (const resource of client.resources) {
      await tx`insert into oauth_client_resources (client_id, resource) values (${id}, ${resource})`;
    }
    for (const projectId of client.projectIds) {
      await tx`insert into oauth_client_projects (client_id, project_id) values (${id}, ${projectId})`;
    }
    const details = {
      ...VIA_CLI,
      grantTypes: client.grantTypes,
      resources: client.resources,
      projectIds: client.projectIds,
      firstParty: client.firstParty,
    };
    await tx`
        insert into audit_events (event, client_id, result, details)
        values ('client.created', ${client.clientId}, 'success', ${tx.json(details)})`;
  });
}
