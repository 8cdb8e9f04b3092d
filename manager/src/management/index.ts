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
import { addDirectorySourceHandler, addDirectorySourceRoute } from "./directory-sources-add.ts";
import { listDirectorySourcesHandler, listDirectorySourcesRoute } from "./directory-sources-list.ts";
import { removeDirectorySourceHandler, removeDirectorySourceRoute } from "./directory-sources-remove.ts";
import { removeGrantHandler, removeGrantRoute } from "./grant-remove.ts";
import { setGrantHandler, setGrantRoute } from "./grant-set.ts";
import { listGrantsHandler, listGrantsRoute } from "./grants-list.ts";
import { addResourceHandler, addResourceRoute } from "./resources-add.ts";
import { listResourcesHandler, listResourcesRoute } from "./resources-list.ts";
import { removeResourceHandler, removeResourceRoute } from "./resources-remove.ts";
import { addRoleHandler, addRoleRoute } from "./roles-add.ts";
import { listRolesHandler, listRolesRoute } from "./roles-list.ts";
import { removeRoleHandler, removeRoleRoute } from "./roles-remove.ts";
import { addUserHandler, addUserRoute } from "./users-add.ts";
import { listUsersHandler, listUsersRoute } from "./users-list.ts";
import { removeUserHandler, removeUserRoute } from "./users-remove.ts";

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
  app.openapi(listResourcesRoute, listResourcesHandler(deps));
  app.openapi(addResourceRoute, addResourceHandler(deps));
  app.openapi(removeResourceRoute, removeResourceHandler(deps));
  app.openapi(listRolesRoute, listRolesHandler(deps));
  app.openapi(addRoleRoute, addRoleHandler(deps));
  app.openapi(removeRoleRoute, removeRoleHandler(deps));
  app.openapi(listUsersRoute, listUsersHandler(deps));
  app.openapi(addUserRoute, addUserHandler(deps));
  app.openapi(removeUserRoute, removeUserHandler(deps));
  app.openapi(listDirectorySourcesRoute, listDirectorySourcesHandler(deps));
  app.openapi(addDirectorySourceRoute, addDirectorySourceHandler(deps));
  app.openapi(removeDirectorySourceRoute, removeDirectorySourceHandler(deps));
  return app;
}
