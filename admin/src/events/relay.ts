/**
 * `GET /api/events`: the Manager's operations event stream, relayed same-origin with the
 * session's token. Bytes are passed on as they arrive (no compression, no buffering headers
 * for proxies). The relay ends with its session: when PostgreSQL says the session ended
 * (SessionWatch), or when the Manager, which ends a stream once its token expires or stops
 * standing, refuses the session's current token on the one reconnect that follows.
 */
import type { Hono } from "hono";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import { readSessionId } from "../sessions/cookie.ts";
import type { SessionWatch } from "./session-watch.ts";

export const EVENTS_PATH = "/api/events";

/**
 * An upstream that ended sooner than this after it opened is not reconnected: the browser's
 * stream ends instead and the browser reconnects, so a Manager ending streams at once is never
 * asked again in a loop.
 */
const RECONNECT_AFTER_MS = 1000;

const refused = (response: Response) => response.status === 401 || response.status === 403;

export function registerEvents(
  app: Hono<AdminEnv>,
  deps: AdminDeps,
  watch: SessionWatch,
  fetchImpl: typeof fetch = fetch,
) {
  app.get(EVENTS_PATH, async (c) => {
    const session = c.get("session");
    const id = readSessionId(c, deps.cookie) as string;
    const url = `${deps.managerUrl}/api/v1/operations/events${new URL(c.req.url).search}`;
    const upstreamAbort = new AbortController();
    const connect = (accessToken: string) =>
      fetchImpl(url, {
        headers: { authorization: `Bearer ${accessToken}`, accept: "text/event-stream" },
        signal: upstreamAbort.signal,
      });
    /** The Manager refused the session's token (disabled, no longer an operator): the session is over. */
    const endSession = async (response: Response) => {
      await response.body?.cancel();
      await deps.sessions.end(session.hash);
    };

    let upstream: Response;
    try {
      upstream = await connect(session.tokens.accessToken);
    } catch (error) {
      deps.logger.warn("the Manager's event stream did not answer", { error: String(error) });
      return c.json({ code: "MANAGER_UNAVAILABLE", message: "the Manager did not answer" }, 502);
    }
    if (refused(upstream)) {
      await endSession(upstream);
      return c.json({ code: "UNAUTHENTICATED", message: "the session has ended; sign in again" }, 401);
    }
    if (!upstream.ok || upstream.body === null) {
      await upstream.body?.cancel();
      return c.json({ code: "MANAGER_REFUSED", message: `the Manager answered ${upstream.status}` }, 502);
    }

    /** The session's current token (refreshed when due) on a new upstream; undefined ends the relay. */
    const reconnect = async (): Promise<ReadableStream<Uint8Array> | undefined> => {
      const current = await deps.sessions.current(id, false);
      if (current === undefined) return undefined;
      const response = await connect(current.tokens.accessToken);
      if (refused(response)) {
        await endSession(response);
        return undefined;
      }
      if (response.ok && response.body !== null) return response.body;
      await response.body?.cancel();
      return undefined;
    };

    let ended = false;
    let unwatch = () => {};
    const finish = () => {
      ended = true;
      unwatch();
      upstreamAbort.abort();
    };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const end = () => {
          if (ended) return;
          finish();
          try {
            controller.close();
          } catch {
            // the browser went away first
          }
        };
        unwatch = watch.watch(session.hash, end);
        c.req.raw.signal.addEventListener("abort", end);
        void (async () => {
          let source: ReadableStream<Uint8Array> | undefined = upstream.body as ReadableStream<Uint8Array>;
          try {
            while (source !== undefined && !ended) {
              const openedAt = Date.now();
              const reader = source.getReader();
              for (;;) {
                const { done, value } = await reader.read();
                if (done || ended) break;
                controller.enqueue(value);
              }
              // The Manager ended its stream: the token expired (a refreshed one goes on) or stopped standing.
              source = !ended && Date.now() - openedAt >= RECONNECT_AFTER_MS ? await reconnect() : undefined;
            }
          } catch {
            // the upstream was aborted or broke: the browser reconnects
          }
          end();
        })();
      },
      cancel() {
        finish();
      },
    });
    return c.body(body, 200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      "content-encoding": "identity",
    });
  });
}
