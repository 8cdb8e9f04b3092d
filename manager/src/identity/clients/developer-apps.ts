/**
 * Developer apps: OAuth clients an account owns (the account portal's /me/developer-apps). What
 * an installation's administrator may give a client, an account may not: a developer app is
 * always third-party (its users see the consent page), gets only `openid profile email` and no
 * TJM resource, never acts for itself (no client_credentials), redirects to https only (http on a
 * loopback address for a native app), and an account has at most DEVELOPER_APPS_PER_ACCOUNT.
 * The pure rules are here; the clients' own rules (defineClient) judge the rest.
 */
import type { Sql } from "../../platform/db.ts";
import { redirectUriRefusal } from "./rules.ts";

export const DEVELOPER_APP_SCOPES = ["openid", "profile", "email"] as const;
export const DEVELOPER_APPS_PER_ACCOUNT = 10;

export type ApplicationType = "web" | "native";

export interface DeveloperAppProposal {
  name: string;
  public: boolean;
  applicationType: ApplicationType;
  grantTypes: string[];
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  scopes: string[];
  firstParty: boolean;
  resources: string[];
}

export type DeveloperAppProblem =
  | { code: "developer.scope_not_allowed"; scope: string }
  | { code: "developer.first_party_not_allowed" }
  | { code: "developer.resource_not_allowed"; resource: string }
  | { code: "developer.client_credentials_not_allowed" }
  | {
      code: "developer.redirect_uri_not_https";
      field: "redirectUris" | "postLogoutRedirectUris";
      uri: string;
    };

/** Every developer-app rule the proposal breaks, in a stable order. */
export function developerAppProblems(proposal: DeveloperAppProposal): DeveloperAppProblem[] {
  const problems: DeveloperAppProblem[] = [];
  for (const scope of proposal.scopes) {
    if (!(DEVELOPER_APP_SCOPES as readonly string[]).includes(scope)) {
      problems.push({ code: "developer.scope_not_allowed", scope });
    }
  }
  if (proposal.firstParty) problems.push({ code: "developer.first_party_not_allowed" });
  for (const resource of proposal.resources)
    problems.push({ code: "developer.resource_not_allowed", resource });
  if (proposal.grantTypes.includes("client_credentials")) {
    problems.push({ code: "developer.client_credentials_not_allowed" });
  }
  // A web app redirects over https only; a native one may also use loopback http (RFC 8252 §7.3).
  if (proposal.applicationType === "web") {
    for (const field of ["redirectUris", "postLogoutRedirectUris"] as const) {
      for (const uri of proposal[field]) {
        if (redirectUriRefusal(uri) === undefined && URL.parse(uri)?.protocol !== "https:") {
          problems.push({ code: "developer.redirect_uri_not_https", field, uri });
        }
      }
    }
  }
  return problems;
}

/** The metadata the provider enforces for a developer app: the scopes it may ask and its application type. */
export function developerAppMetadata(
  applicationType: ApplicationType,
  scopes: readonly string[],
): Record<string, string> {
  return { scope: [...new Set(scopes)].join(" "), application_type: applicationType };
}

/** The account already has DEVELOPER_APPS_PER_ACCOUNT apps. */
export class DeveloperAppLimitError extends Error {}

/**
 * Refuses an 11th app. Called in the creating transaction after locking the account's row, so
 * two concurrent creations cannot both see nine.
 */
export async function checkDeveloperAppLimit(tx: Sql, accountId: string): Promise<void> {
  await tx`select 1 from accounts where id = ${accountId} for update`;
  const [row] = await tx<{ count: number }[]>`
    select count(*)::int as count from oauth_clients
    where owner_account_id = ${accountId} and deleted_at is null`;
  if ((row?.count ?? 0) >= DEVELOPER_APPS_PER_ACCOUNT) {
    throw new DeveloperAppLimitError(`an account has at most ${DEVELOPER_APPS_PER_ACCOUNT} developer apps`);
  }
}
