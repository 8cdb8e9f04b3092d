/**
 * Client authentication against the stored HMAC, as oidc-provider is made to do it. The
 * clients themselves (rows, rules, secrets) are the identity domain's (identity/clients/).
 */
import type { Provider } from "oidc-provider";

/** Whether `presented` is the secret whose HMAC is `storedHmac` (identity/clients/secrets.ts). */
export type ClientSecretVerifier = (presented: string, storedHmac: string) => boolean | Promise<boolean>;

/**
 * Makes client_secret_basic and client_secret_post compare the presented secret against the
 * stored HMAC. oidc-provider 9 authenticates those methods only through
 * `Client.prototype.compareClientSecret` (lib/shared/client_auth.js awaits it), the hook its
 * maintainer exposed for hashed secrets (node-oidc-provider issue #631). What a hashed secret
 * rules out stays off in the provider's settings: client_secret_jwt, HS* signatures and
 * symmetric encryption (all need the plain secret as a key), and dynamic registration.
 */
export function compareClientSecretsByHmac(provider: Provider, verify: ClientSecretVerifier): void {
  provider.Client.prototype.compareClientSecret = async function (
    this: { clientSecret?: string },
    presented,
  ) {
    return typeof this.clientSecret === "string" && (await verify(presented, this.clientSecret));
  };
}
