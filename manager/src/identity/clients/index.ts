export {
  type ApplicationType,
  DEVELOPER_APP_SCOPES,
  DEVELOPER_APPS_PER_ACCOUNT,
  DeveloperAppLimitError,
  type DeveloperAppProblem,
  developerAppMetadata,
  developerAppProblems,
} from "./developer-apps.ts";
export {
  auditRefusedClientChange,
  type ClientActor,
  type ClientFilter,
  type ClientGrant,
  ClientNotFoundError,
  type ClientRecord,
  createManagedClient,
  deleteManagedClient,
  findClient,
  GrantNotFoundError,
  listClients,
  listGrants,
  PublicClientError,
  removeGrant,
  replaceClient,
  rotateClientSecret,
  setGrant,
} from "./management.ts";
export { clientMetadataFrom, findClientMetadata, TJM_CLIENT_METADATA } from "./metadata.ts";
export {
  addNested,
  CLIENT_ROLES,
  DIRECTORY_SOURCES,
  listNested,
  NestedEntryNotFoundError,
  type NestedKind,
  removeNested,
  UnknownAccountForClientError,
} from "./nested.ts";
export { type RegisteredClient, registerClient } from "./register.ts";
export {
  ACCESS_TOKEN_TTL_BOUNDS,
  CLIENT_GRANT_TYPES,
  type ClientDefinition,
  type ClientProblem,
  type ClientProposal,
  type ClientUriField,
  defineClient,
  type RedirectUriRefusal,
  redirectUriRefusal,
} from "./rules.ts";
export { generateClientSecret, hashClientSecret, verifyClientSecret } from "./secrets.ts";
export { createClient, type NewClient, UnknownProjectError } from "./store.ts";
