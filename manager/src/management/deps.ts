import type { Logger } from "@tjm/platform";
import type { Sql } from "../platform/db.ts";

/** What client management's routes (/api/v1/management/clients…) work with. */
export interface ManagementDeps {
  sql: Sql;
  logger: Logger;
  /** CLIENT_SECRET_HMAC_KEY: new and rotated secrets are stored as their HMAC under it. */
  clientSecretKey: string | undefined;
  /** Every resource a client may be granted: the audiences of TJM's four resources. */
  resources: ReadonlySet<string>;
  /** REAUTHENTICATION_MAX_AGE_SECONDS: rotating a secret and deleting a client need a sign-in this recent. */
  reauthenticationMaxAgeSeconds: number;
  /** Told after a deletion queued back-channel logouts (the sender's wake). */
  logoutsQueued: () => void;
}
