/**
 * One route factory per audience. A route states its audience and gets that audience's
 * principal, typed, in its handler: the factory sets the OpenAPI security scheme and the 401
 * and 403 answers, and binds the bearer check to the route itself, so a handler cannot be
 * reached without it, whatever path prefix it is mounted under.
 */

import type { MiddlewareHandler } from "hono";
import type { ErrorCode } from "../../platform/errors.ts";
import { apiRoute, BEARER_ERRORS, type RouteDefinition } from "../../platform/routes.ts";
import type { Audience, Principals } from "./principals.ts";
import type { AudienceAuthenticator } from "./verify.ts";

/** The OpenAPI security scheme of each audience (registered by docs/index.ts). */
export const AUDIENCE_SECURITY: Record<Audience, { [scheme: string]: string[] }[]> = {
  operator: [{ operatorBearer: [] }],
  tenant: [{ tenantBearer: [] }],
  account: [{ accountBearer: [] }],
  clientAdmin: [{ clientAdminBearer: [] }],
};

/** The context variable holding the app's authenticator (createApp sets it on every request). */
export const AUTHENTICATOR_VARIABLE = "audienceAuthenticator";

type AuthenticatorVariables = { [AUTHENTICATOR_VARIABLE]: AudienceAuthenticator | undefined };

/** Makes the app's authenticator available to every route's own bearer check. */
export function provideAuthenticator(
  authenticator: AudienceAuthenticator,
): MiddlewareHandler<{ Variables: AuthenticatorVariables }> {
  return async (c, next) => {
    c.set(AUTHENTICATOR_VARIABLE, authenticator);
    await next();
  };
}

/**
 * The route's bearer check: its audience's principal, set under the audience's name. A
 * principal a guard of the path prefix already set for this request is kept (one check per
 * request); without an authenticator the request fails closed (500), never open.
 */
export function requireAudience<A extends Audience>(
  audience: A,
): MiddlewareHandler<{ Variables: Pick<Principals, A> & AuthenticatorVariables }> {
  return async (c, next) => {
    const get = c.get as (key: string) => unknown;
    if (get(audience) === undefined) {
      const authenticate = c.get(AUTHENTICATOR_VARIABLE);
      if (!authenticate) throw new Error(`no authenticator for the ${audience} route ${c.req.path}`);
      const principal = await authenticate(audience, c.req.header("authorization"));
      (c.set as (key: string, value: unknown) => void)(audience, principal);
    }
    await next();
  };
}

type AudienceRouteDefinition = Omit<RouteDefinition, "security" | "middleware">;

function audienceRoute<A extends Audience>(audience: A, audienceErrors: readonly ErrorCode[] = []) {
  return <R extends AudienceRouteDefinition>(definition: R) =>
    apiRoute({
      ...definition,
      security: AUDIENCE_SECURITY[audience],
      errors: [...BEARER_ERRORS, ...audienceErrors, ...definition.errors],
      middleware: requireAudience(audience),
    });
}

/** The operations audience (OIDC_OPERATIONS_ADMIN_AUDIENCE): `c.get("operator")`. */
export const operatorRoute = audienceRoute("operator", ["auth.mfa_required"]);
/** The tenant audience (OIDC_TENANT_AUDIENCE) with its projects: `c.get("tenant")`. */
export const tenantRoute = audienceRoute("tenant");
/** The account-portal audience; the subject is the account: `c.get("account")`. */
export const accountRoute = audienceRoute("account");
/** The admin-console audience, for accounts holding the client-admin role: `c.get("clientAdmin")`. */
export const clientAdminRoute = audienceRoute("clientAdmin");
