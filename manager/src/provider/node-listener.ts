/**
 * The Node entrypoint's request listener: the provider's path goes to oidc-provider (a Koa
 * app, so a Node listener) and its interaction pages; everything else to the Manager's Hono
 * app. The provider lives under its own path so its routes (/auth, /token, /jwks, /session/end
 * …) and cookies never meet the API's, and a Deno Manager serves the same API without it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { INTERACTION_PATH } from "./configuration.ts";
import type { IdentityProvider } from "./index.ts";

type Listener = (req: IncomingMessage, res: ServerResponse) => void;
type Fetch = Parameters<typeof getRequestListener>[0];

const FORWARDING_HEADERS = ["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "forwarded"];

export interface ProviderMount {
  identity: IdentityProvider;
  /** The interaction pages' Hono app. */
  interactions: { fetch: Fetch };
  trustedProxies: readonly string[];
}

function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`);
}

export function nodeListener(app: { fetch: Fetch }, mount?: ProviderMount): Listener {
  const api = getRequestListener(app.fetch);
  if (!mount) return api;
  const interactions = getRequestListener(mount.interactions.fetch);
  const trusted = new Set(mount.trustedProxies);
  const prefix = mount.identity.mountPath;
  const issuer = new URL(mount.identity.issuer);
  return (req, res) => {
    const url = req.url ?? "/";
    if (!under(url, prefix)) return void api(req, res);
    // Only a trusted proxy's forwarding headers are believed (client addresses).
    const socket = (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
    if (!trusted.has(socket)) for (const header of FORWARDING_HEADERS) delete req.headers[header];
    // oidc-provider builds every endpoint and redirect from the request's host and protocol: pin
    // both to the issuer's, so no Host or X-Forwarded-Host header can move discovery elsewhere.
    req.headers.host = issuer.host;
    delete req.headers["x-forwarded-host"];
    req.headers["x-forwarded-proto"] = issuer.protocol.slice(0, -1);
    if (under(url, `${prefix}${INTERACTION_PATH}`)) return void interactions(req, res);
    // Mounted as connect would: the provider routes on the rest and builds URLs from originalUrl.
    (req as IncomingMessage & { originalUrl?: string }).originalUrl = url;
    req.url = url.slice(prefix.length) || "/";
    mount.identity.handle(req, res);
  };
}
