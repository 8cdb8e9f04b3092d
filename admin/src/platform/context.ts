import type { HttpBindings } from "@hono/node-server";
import type { Logger } from "@tjm/platform";
import type { SessionCookie } from "../sessions/cookie.ts";
import type { Session, Sessions } from "../sessions/sessions.ts";
import type { RelyingParty } from "../sign-in/relying-party.ts";

/** Everything the console's routes use; built by main.ts (or a test), never at import time. */
export interface AdminDeps {
  /** The console's origin as browsers see it (ADMIN_PUBLIC_URL). */
  publicOrigin: string;
  managerUrl: string;
  sessions: Sessions;
  relyingParty: RelyingParty;
  cookie: SessionCookie;
  logger: Logger;
  /** Bodies the proxy takes, at most (MAX_BODY_BYTES); 1 MiB by default. Other routes take 16 KiB. */
  maxBodyBytes?: number;
  /** How often open event streams check that their session still stands; default 1 s. */
  streamCheckMs?: number;
  /** How often the Manager is asked whether open event streams' tokens still stand; default 2 s. */
  standingCheckMs?: number;
}

export interface AdminEnv {
  /** Served by @hono/node-server: the event stream writes to Node's response itself. */
  Bindings: HttpBindings;
  Variables: { session: Session; requestId: string };
}
