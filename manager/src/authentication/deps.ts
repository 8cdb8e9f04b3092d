import type { Recovery } from "../identity/recovery/index.ts";

/** What the public authentication routes (/api/v1/authentication/…) work with. */
export interface AuthenticationDeps {
  /** The recovery domain (identity/recovery): the routes only map its outcomes to answers. */
  recovery: Recovery;
  /** TRUSTED_PROXY_ADDRESSES: whose X-Forwarded-For names the client address the limits count. */
  trustedProxies: readonly string[];
}
