export { clientMetadataFrom, findClientMetadata, TJM_CLIENT_METADATA } from "./metadata.ts";
export { type RegisteredClient, registerClient } from "./register.ts";
export {
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
