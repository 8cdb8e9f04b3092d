/**
 * Accounts and OAuth clients for tests, written with the same store functions the CLI uses,
 * and tokens got from the real built-in provider through the headless sign-in client.
 */
import {
  type AuthorizationOptions,
  type BrowserSession,
  type Credentials,
  clientCredentialsToken,
  signIn,
  type Tokens,
} from "@tjm/devstack/oidc-client";
import { type AccountRole, createAccount } from "../../manager/src/identity/accounts/index.ts";
import {
  createClient,
  generateClientSecret,
  hashClientSecret,
} from "../../manager/src/identity/clients/index.ts";
import { hashPassword } from "../../manager/src/identity/password-hashing.ts";
import type { Sql } from "../../manager/src/platform/db.ts";

/** Settings every test Manager's provider runs with (tests only; real ones come from the environment). */
export const TEST_PROVIDER_KEY_ENCRYPTION_KEY = "test-provider-key-encryption-key-0123456789abcdef";
export const TEST_CLIENT_SECRET_HMAC_KEY = "test-client-secret-hmac-key-0123456789abcdef";
/** Where test clients' browsers are sent back to; never fetched (the sign-in client stops there). */
export const TEST_REDIRECT_URI = "http://127.0.0.1:9/callback";
export const TEST_PASSWORD = "correct horse battery staple 42";

/** argon2id costs ~0.1 s: one hash of the shared test password per process is enough. */
let testPasswordHash: Promise<string> | undefined;
function passwordHashFor(password: string): Promise<string> {
  if (password !== TEST_PASSWORD) return hashPassword(password);
  testPasswordHash ??= hashPassword(TEST_PASSWORD);
  return testPasswordHash;
}

export interface TestAccount {
  accountId: string;
  email: string;
  password: string;
}

export async function createTestAccount(
  sql: Sql,
  options: { roles?: AccountRole[]; email?: string; password?: string } = {},
): Promise<TestAccount> {
  const email = options.email ?? `account-${crypto.randomUUID()}@example.com`;
  const password = options.password ?? TEST_PASSWORD;
  const { accountId } = await createAccount(sql, {
    email,
    displayName: "Test account",
    passwordHash: await passwordHashFor(password),
    roles: options.roles ?? [],
  });
  return { accountId, email, password };
}

export interface TestClient {
  clientId: string;
  /** Undefined for a public client. */
  clientSecret: string | undefined;
  redirectUri: string;
}

export async function createTestClient(
  sql: Sql,
  options: {
    resources: string[];
    grantTypes?: string[];
    firstParty?: boolean;
    confidential?: boolean;
    projectIds?: string[];
    name?: string;
  },
): Promise<TestClient> {
  const grantTypes = options.grantTypes ?? ["authorization_code", "refresh_token"];
  const interactive = grantTypes.includes("authorization_code");
  const confidential = options.confidential ?? !interactive;
  const clientSecret = confidential ? generateClientSecret() : undefined;
  const clientId = crypto.randomUUID();
  await createClient(sql, {
    clientId,
    name: options.name ?? "Test client",
    clientSecretHmac:
      clientSecret === undefined ? null : hashClientSecret(clientSecret, TEST_CLIENT_SECRET_HMAC_KEY),
    tokenEndpointAuthMethod: clientSecret === undefined ? "none" : "client_secret_basic",
    redirectUris: interactive ? [TEST_REDIRECT_URI] : [],
    grantTypes,
    responseTypes: interactive ? ["code"] : [],
    firstParty: options.firstParty ?? true,
    resources: options.resources,
    projectIds: options.projectIds ?? [],
  });
  return { clientId, clientSecret, redirectUri: TEST_REDIRECT_URI };
}

/** The resource indicator a client sends for a TJM audience (identity/resources.ts). */
export { resourceIndicator } from "../../manager/src/identity/resources.ts";

export function signInAs(
  issuer: string,
  client: TestClient,
  account: TestAccount,
  resource: string,
  scope = "openid offline_access",
  session?: BrowserSession,
  /** The second step's answer (an account with a factor), and an essential acr or max_age to ask for. */
  more: Pick<Credentials, "secondFactor"> & Pick<AuthorizationOptions, "claims" | "maxAge"> = {},
) {
  return signIn({
    ...more,
    session,
    issuer,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    redirectUri: client.redirectUri,
    resource,
    scope,
    email: account.email,
    password: account.password,
  });
}

export function clientToken(issuer: string, client: TestClient, resource: string): Promise<Tokens> {
  return clientCredentialsToken({
    issuer,
    clientId: client.clientId,
    clientSecret: client.clientSecret as string,
    resource,
  });
}
