/**
 * The address of the client behind a request: the socket's, unless the socket is a trusted
 * reverse proxy, in which case X-Forwarded-For is read from the right (each proxy appends the
 * address it saw) past every trusted proxy. Entries left of the first untrusted one are the
 * client's own claims and never believed.
 */
import { isIP } from "node:net";

function normalize(address: string): string {
  const trimmed = address.trim();
  // IPv4 clients of a dual-stack socket appear as ::ffff:a.b.c.d.
  return trimmed.startsWith("::ffff:") && isIP(trimmed.slice(7)) === 4 ? trimmed.slice(7) : trimmed;
}

export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trustedProxies: readonly string[],
): string | undefined {
  if (socketAddress === undefined) return undefined;
  const trusted = new Set(trustedProxies.map(normalize));
  let address = normalize(socketAddress);
  if (!forwardedFor) return address;
  const hops = forwardedFor
    .split(",")
    .map(normalize)
    .filter((hop) => hop.length > 0);
  while (trusted.has(address)) {
    const next = hops.pop();
    if (next === undefined || isIP(next) === 0) break;
    address = next;
  }
  return address;
}

/**
 * The socket's address from a request's runtime bindings: Node's (@hono/node-server's
 * `incoming`) or Deno's (`Deno.serve`'s info, `remoteAddr`). Undefined where neither is given.
 */
export function socketAddress(bindings: unknown): string | undefined {
  const env = bindings as
    | { incoming?: { socket?: { remoteAddress?: string } }; remoteAddr?: { hostname?: string } }
    | undefined;
  return env?.incoming?.socket?.remoteAddress ?? env?.remoteAddr?.hostname;
}
