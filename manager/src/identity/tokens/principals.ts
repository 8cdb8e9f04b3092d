/**
 * Who a verified token speaks for, one shape per audience: what a route of that audience gets
 * instead of raw claims.
 */
import type { JWTPayload } from "jose";

/** The operations audience: an operator (an account of TJM's issuer or of an external one). */
export interface Operator {
  subject: string;
  claims: JWTPayload;
}

/** The claim of a tenant token listing the project ids it may act on: those its client is bound to. */
export const TENANT_PROJECTS_CLAIM = "tjm_projects";

/** The tenant audience: a client acting for its projects (client_credentials). */
export interface Tenant {
  subject: string;
  /** Project ids from the tjm_projects claim. */
  projects: string[];
}

export function tenantMayActOn(tenant: Tenant, projectId: string): boolean {
  return tenant.projects.includes(projectId);
}

/** The account-portal audience: an account, through one client, in one sign-in session. */
export interface AccountPrincipal {
  accountId: string;
  /** The provider's session id (`sid`). */
  sessionId: string;
  clientId: string;
  /** When the account signed in (the token's auth_time, seconds); undefined when the token has none. */
  authenticatedAt: number | undefined;
}

/** The admin-console audience, for an account holding the client-admin role. */
export type ClientAdmin = AccountPrincipal;

export interface Principals {
  operator: Operator;
  tenant: Tenant;
  account: AccountPrincipal;
  clientAdmin: ClientAdmin;
}

/** The audiences routes are written for, by the name of the principal each gets. */
export type Audience = keyof Principals;

export function operatorOf(claims: JWTPayload): Operator {
  return { subject: claims.sub as string, claims };
}

export function tenantOf(claims: JWTPayload): Tenant {
  const granted = claims[TENANT_PROJECTS_CLAIM];
  const projects = Array.isArray(granted)
    ? granted.filter((item): item is string => typeof item === "string")
    : [];
  return { subject: claims.sub as string, projects };
}

/** The standing check has already refused tokens without an account, a session or a client. */
export function accountPrincipalOf(claims: JWTPayload): AccountPrincipal {
  return {
    accountId: claims.sub as string,
    sessionId: claims.sid as string,
    clientId: claims.client_id as string,
    authenticatedAt: typeof claims.auth_time === "number" ? claims.auth_time : undefined,
  };
}
