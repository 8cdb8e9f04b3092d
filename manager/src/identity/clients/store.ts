/**
 * The clients aggregate's queries: the only writer of oauth_clients and their resources and
 * projects, each change committed with its audit row.
 */
import type { Sql } from "../../platform/db.ts";
import { writeAuditEvent } from "../audit.ts";

export class UnknownProjectError extends Error {}

/** Who acted, in an audit row's details, when no account did: the operator at the command line. */
const VIA_CLI = { via: "cli" } as const;

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
    await writeAuditEvent(tx, {
      event: "client.created",
      result: "success",
      clientId: client.clientId,
      details,
    });
  });
}
