/** The one module of oidc-provider TJM reads beyond its public API (provider/end-session.ts). */
declare module "oidc-provider/lib/actions/end_session.js" {
  import type { KoaContextWithOIDC } from "oidc-provider";

  type Step = ((ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>) & { name: string };
  /** The middleware of POST /session/end/confirm, in order. */
  export const confirm: Step[];
}
