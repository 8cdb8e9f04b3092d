/**
 * TJM's protected resources: what each access token's `aud` names, and the resource indicator
 * (RFC 8707) a client asks for it by. Indicators must be absolute URIs; the audiences are the
 * names the spec uses ("account-portal"), so an audience that is not a URI is asked for as
 * `urn:tjm:<audience>`.
 */

export const ACCOUNT_PORTAL_AUDIENCE = "account-portal";
export const ADMIN_CONSOLE_AUDIENCE = "admin-console";

export type ResourceName = "operations" | "account-portal" | "admin-console" | "tenant";

export interface ResourceAudiences {
  /** OIDC_OPERATIONS_ADMIN_AUDIENCE. */
  operations: string;
  /** OIDC_TENANT_AUDIENCE. */
  tenant: string;
}

export interface TjmResource {
  name: ResourceName;
  audience: string;
  indicator: string;
}

function isAbsoluteUri(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(value) && URL.canParse(value);
}

/** The resource indicator a client sends for `audience`. */
export function resourceIndicator(audience: string): string {
  return isAbsoluteUri(audience) ? audience : `urn:tjm:${audience}`;
}

export function tjmResources(audiences: ResourceAudiences): TjmResource[] {
  const named: [ResourceName, string][] = [
    ["operations", audiences.operations],
    ["account-portal", ACCOUNT_PORTAL_AUDIENCE],
    ["admin-console", ADMIN_CONSOLE_AUDIENCE],
    ["tenant", audiences.tenant],
  ];
  return named.map(([name, audience]) => ({ name, audience, indicator: resourceIndicator(audience) }));
}

/**
 * The role an account must hold to get a resource's tokens; a resource not named here is open
 * to every enabled account (account-portal) or has no account at all (tenant).
 */
const REQUIRED_ROLE: Partial<Record<ResourceName, string>> = {
  operations: "operator",
  "admin-console": "client-admin",
};

/** Whether an account holding `roles` may get tokens for `resource`. */
export function accountMayHold(resource: Pick<TjmResource, "name">, roles: readonly string[]): boolean {
  const role = REQUIRED_ROLE[resource.name];
  return role === undefined || roles.includes(role);
}

/** The role `resource` requires, for messages; undefined when it requires none. */
export function requiredRole(resource: Pick<TjmResource, "name">): string | undefined {
  return REQUIRED_ROLE[resource.name];
}
