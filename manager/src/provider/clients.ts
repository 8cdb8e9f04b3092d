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
 *
 * A rotated client also has the secret it replaced until the end of its grace window
 * (identity/clients/management.ts: rotateClientSecret); the provider keeps one secret per
 * client, so both are compared here, the previous one only while its window is open.
 */
export function compareClientSecretsByHmac(
  provider: Provider,
  verify: ClientSecretVerifier,
  nowSeconds: () => number = () => Date.now() / 1000,
): void {
  provider.Client.prototype.compareClientSecret = async function (
    // TJM's own metadata keeps its snake_case names on the provider's client.
    this: { clientSecret?: string; previous_secret_hmac?: unknown; previous_secret_expires_at?: unknown },
    presented,
  ) {
    if (typeof this.clientSecret !== "string") return false;
    if (await verify(presented, this.clientSecret)) return true;
    const { previous_secret_hmac: previousSecretHmac, previous_secret_expires_at: previousSecretExpiresAt } =
      this;
    return (
      typeof previousSecretHmac === "string" &&
      typeof previousSecretExpiresAt === "number" &&
      nowSeconds() < previousSecretExpiresAt &&
      (await verify(presented, previousSecretHmac))
    );
  };
}
