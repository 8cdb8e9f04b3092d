/**
 * Registering a client: its id and (for a confidential client) its secret generated here, the
 * secret stored only as its HMAC and returned once.
 */
import type { Sql } from "../../platform/db.ts";
import type { ClientDefinition } from "./rules.ts";
import { generateClientSecret, hashClientSecret } from "./secrets.ts";
import { createClient } from "./store.ts";

export interface RegisteredClient {
  clientId: string;
  /** Shown once; absent for a public client. */
  clientSecret?: string;
}

/**
 * `secretKey`: the key client secrets are stored under (CLIENT_SECRET_HMAC_KEY), required for a
 * confidential client. Throws UnknownProjectError when a bound project does not exist.
 */
export async function registerClient(
  sql: Sql,
  definition: ClientDefinition,
  secretKey: string | undefined,
): Promise<RegisteredClient> {
  let secret: { plain: string; hmac: string } | undefined;
  if (!definition.public) {
    if (secretKey === undefined) throw new Error("a confidential client needs the client secret key");
    const plain = generateClientSecret();
    secret = { plain, hmac: hashClientSecret(plain, secretKey) };
  }
  const clientId = crypto.randomUUID();
  await createClient(sql, {
    clientId,
    name: definition.name,
    clientSecretHmac: secret?.hmac ?? null,
    tokenEndpointAuthMethod: secret === undefined ? "none" : "client_secret_basic",
    redirectUris: definition.redirectUris,
    postLogoutRedirectUris: definition.postLogoutRedirectUris,
    backchannelLogoutUri: definition.backchannelLogoutUri,
    grantTypes: definition.grantTypes,
    responseTypes: definition.responseTypes,
    firstParty: definition.firstParty,
    resources: definition.resources,
    projectIds: definition.projectIds,
  });
  return secret === undefined ? { clientId } : { clientId, clientSecret: secret.plain };
}
