/**
 * `GET /api/events`: the Manager's operations event stream, relayed same-origin. Every session
 * following it shares the process's one upstream (fanout.ts); this route validates the filters,
 * joins the session to the fan-out and streams what it is sent. Frames are passed on as they
 * arrive (no compression, headers that stop proxies buffering). The stream ends with its
 * session: when PostgreSQL says the session ended (SessionWatch), or when the Manager no longer
 * accepts the session's token (the fan-out's standing checks). A session without an operations
 * token (an account without the operator role) is refused with 403.
 */
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { ErrorDetail } from "@tjm/platform/error-codes";
import type { Hono } from "hono";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import { answerError, answerHeaders } from "../platform/http.ts";
import { readSessionId } from "../sessions/cookie.ts";
import { EVENT_KINDS, type EventFanout, type EventFilter } from "./fanout.ts";
import type { SessionWatch } from "./session-watch.ts";

export const EVENTS_PATH = "/api/events";

/** Bytes queued for a browser that stopped reading; past this its stream ends (it reconnects). */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type FilterResult = { ok: true; filter: EventFilter } | { ok: false; problems: ErrorDetail[] };

/** `kinds` (comma-separated) and `jobId`, checked as the Manager checks them on its own stream. */
export function parseEventFilter(query: Record<string, string | undefined>): FilterResult {
  const problems: ErrorDetail[] = [];
  let kinds: Set<string> | undefined;
  if (query.kinds !== undefined) {
    const named = query.kinds.split(",").map((kind) => kind.trim());
    const unknown = named.filter((kind) => !(EVENT_KINDS as readonly string[]).includes(kind));
    if (unknown.length > 0)
      problems.push({
        path: "kinds",
        message: `unknown ${unknown.map((kind) => JSON.stringify(kind)).join(", ")}; one of ${EVENT_KINDS.join(", ")}`,
        code: "validation.invalid_value",
      });
    kinds = new Set(named);
  }
  if (query.jobId !== undefined && !UUID.test(query.jobId))
    problems.push({ path: "jobId", message: "must be a UUID", code: "validation.invalid_format" });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, filter: { kinds, jobId: query.jobId } };
}

export function registerEvents(
  app: Hono<AdminEnv>,
  deps: AdminDeps,
  watch: SessionWatch,
  fanout: EventFanout,
) {
  app.get(EVENTS_PATH, async (c) => {
    const parsed = parseEventFilter(c.req.query());
    if (!parsed.ok) {
      return answerError(c, "validation.failed", "Validation failed", { details: parsed.problems });
    }
    const session = c.get("session");
    const operations = session.tokens.access.operations;
    if (operations === undefined) {
      return answerError(
        c,
        "auth.token_refused",
        "this account does not hold the operator role; events are not offered",
      );
    }
    const { outgoing } = c.env;
    let ended = false;
    let leave = () => {};
    let unwatch = () => {};
    const close = () => {
      if (ended) return;
      ended = true;
      unwatch();
      leave();
      outgoing.end();
    };
    // Frames sent while the join is still deciding wait for the response's headers.
    let early: Uint8Array[] | undefined = [];
    const send = (frame: Uint8Array) => {
      if (ended) return;
      if (early !== undefined) {
        early.push(frame);
        return;
      }
      // Node's response, not a web stream: at a thousand streams per event, web streams'
      // per-chunk promises were most of the relay's delay (bench admin-sse). Writing chunks
      // to the sockets directly, uncorked, measured slower still.
      if (!outgoing.write(frame) && outgoing.writableLength > MAX_QUEUED_BYTES) close();
    };
    const joined = await fanout.join({
      sessionId: readSessionId(c, deps.cookie) as string,
      sessionHash: session.hash,
      accessToken: operations.token,
      accessExpiresAt: operations.expiresAt,
      filter: parsed.filter,
      send,
      end: close,
    });
    if (!joined.joined) {
      return joined.status === 401
        ? answerError(c, "auth.session_missing", "the session has ended; sign in again")
        : answerError(c, "dependency.manager_unavailable", "the Manager did not answer");
    }
    leave = joined.leave;
    unwatch = watch.watch(session.hash, close);
    outgoing.on("close", close);
    outgoing.writeHead(200, {
      ...answerHeaders("text/event-stream"),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      "content-encoding": "identity",
    });
    outgoing.flushHeaders();
    const waiting = early;
    early = undefined;
    for (const frame of waiting) send(frame);
    if (outgoing.destroyed) close();
    return RESPONSE_ALREADY_SENT;
  });
}
