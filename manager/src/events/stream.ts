import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { z } from "@hono/zod-openapi";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { EventSubscriber } from "./fanout.ts";
import type { EventHub } from "./hub.ts";
import { EVENT_KINDS, EventEnvelopeSchema } from "./schema.ts";
import { ResponseSink, WebStreamSink } from "./sinks.ts";
import type { StandingWatch } from "./standing-watch.ts";

/** How long a new subscriber waits for the events stream before "connected" is sent anyway. */
const READY_WAIT_MS = 5000;

export const EventsQuerySchema = z.object({
  kinds: z
    .string()
    .optional()
    .transform((value) => value?.split(",").map((kind) => kind.trim()))
    .pipe(z.array(z.enum(EVENT_KINDS)).min(1, "must name at least one kind").optional())
    .openapi({
      param: { name: "kinds", in: "query" },
      description: "Only these kinds, comma-separated",
      type: "string",
      example: "job.created,job.updated",
    }),
  jobId: z
    .uuid()
    .optional()
    .openapi({ param: { name: "jobId", in: "query" }, description: "Only events of this job" }),
});

export const streamEventsRoute = operatorRoute({
  method: "get",
  path: "/events",
  tags: ["events"],
  summary: "Stream operational events (Server-Sent Events)",
  operationId: "streamEvents",
  description:
    "text/event-stream of lifecycle changes as they are published: each message has `id`, `event` (the kind) and `data` (the EventEnvelope as JSON), plus a `: keep-alive` comment every 15 s. Transient: after reconnecting, refetch the REST resources. The stream ends at the token's expiry, and within SSE_STANDING_CHECK_MS (2 s by default) of the token no longer standing (account disabled, client re-authorized, sign-in session ended), together with every other stream of the same token; reconnect with a current token. A client more than 1 MiB behind is disconnected.",
  request: { query: EventsQuerySchema },
  responses: {
    200: {
      description: "The stream; each data line is an EventEnvelope",
      content: { "text/event-stream": { schema: EventEnvelopeSchema } },
    },
  },
  errors: [],
});

const CONNECTED = new TextEncoder().encode(": connected\n\n");

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  // Reverse proxies (nginx) must not buffer the stream.
  "x-accel-buffering": "no",
};

export const streamEvents =
  (hub: EventHub, standing: StandingWatch): AppRouteHandler<typeof streamEventsRoute> =>
  (c) => {
    const { kinds, jobId } = c.req.valid("query");
    const { claims } = c.get("operator");
    // @hono/node-server hands the handler Node's response; Deno's server does not.
    const outgoing = (c.env as Partial<HttpBindings> | undefined)?.outgoing;
    const sink = outgoing ? new ResponseSink(outgoing) : new WebStreamSink(c.req.raw.signal);
    // The same headers either way, with what the middleware set (the request id).
    const response = c.newResponse(sink instanceof WebStreamSink ? sink.body : null, 200, SSE_HEADERS);
    if (outgoing) {
      outgoing.writeHead(200, Object.fromEntries(response.headers));
      outgoing.flushHeaders();
    }
    const subscriber: EventSubscriber = { kinds: kinds && new Set(kinds), jobId, sink };
    let unwatch = () => {};
    sink.onEnd = () => {
      unwatch();
      hub.unsubscribe(subscriber);
    };
    hub.subscribe(subscriber);
    // Ends once its token no longer stands or expires: the client reconnects and is refused.
    unwatch = standing.watch(claims, () => sink.end());
    // "connected" once events flow (or after a bounded wait while NATS is away).
    const live = hub.untilLive();
    if (live === undefined) sink.write(CONNECTED);
    else
      void Promise.race([live, new Promise((resolve) => setTimeout(resolve, READY_WAIT_MS))]).then(() =>
        sink.write(CONNECTED),
      );
    return (outgoing ? RESPONSE_ALREADY_SENT : response) as never;
  };
