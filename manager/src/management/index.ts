/**
 * Client management (/api/v1/management/clients…): every route is a clientAdminRoute (an
 * admin-console token of an account holding the client-admin role). Every route under
 * /clients/{client} takes the client's UUID or its public client_id under that one name.
 */
import { createRouter } from "../platform/http.ts";
import { createClientHandler, createClientRoute } from "./client-create.ts";
import { deleteClientHandler, deleteClientRoute } from "./client-delete.ts";
import { readClientHandler, readClientRoute } from "./client-read.ts";
import { replaceClientHandler, replaceClientRoute } from "./client-replace.ts";
import { rotateSecretHandler, rotateSecretRoute } from "./client-rotate-secret.ts";
import { listClientsHandler, listClientsRoute } from "./clients-list.ts";
import type { ManagementDeps } from "./deps.ts";
import { removeGrantHandler, removeGrantRoute } from "./grant-remove.ts";
import { setGrantHandler, setGrantRoute } from "./grant-set.ts";
import { listGrantsHandler, listGrantsRoute } from "./grants-list.ts";

export type { ManagementDeps } from "./deps.ts";

/** Mounted under /api/v1. */
export function managementApp(deps: ManagementDeps) {
  const app = createRouter();
  app.openapi(listClientsRoute, listClientsHandler(deps));
  app.openapi(rotateSecretRoute, rotateSecretHandler(deps));
  app.openapi(createClientRoute, createClientHandler(deps));
  app.openapi(readClientRoute, readClientHandler(deps));
  app.openapi(replaceClientRoute, replaceClientHandler(deps));
  app.openapi(deleteClientRoute, deleteClientHandler(deps));
  app.openapi(listGrantsRoute, listGrantsHandler(deps));
  app.openapi(setGrantRoute, setGrantHandler(deps));
  app.openapi(removeGrantRoute, removeGrantHandler(deps));
  return app;
}
