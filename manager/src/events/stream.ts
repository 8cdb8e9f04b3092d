import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { z } from "@hono/zod-openapi";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { EventSubscriber } from "./fanout.ts";
import type { EventHub } from "./hub.ts";
import { ResponseSink, WebStreamSink } from "./sinks.ts";
import type { StandingWatch } from "./standing-watch.ts";

export const EVENT_KINDS = [
  "job.created",
  "job.updated",
  "job.progress",
  "worker.registered",
  "worker.updated",
] as const;

/** How long a new subscriber waits for the events stream before "connected" is sent anyway. */
const READY_WAIT_MS = 5000;

export const EventEnvelopeSchema = z
  .object({
    id: z.string().openapi({
      description:
        "Event id, unique across databases and installations (the outbox row's message id, also its Nats-Msg-Id; job.progress ids are progress-<n>); clients dedupe by it. Not a sequence number: events arrive in order.",
      example: "5f0c6a52-3f5e-4d7b-9b8e-2a1c0d4e6f70",
    }),
    kind: z.enum(EVENT_KINDS).openapi({ example: "job.updated" }),
    occurredAt: z.iso.datetime().openapi({ example: "2026-11-21T10:00:00.000Z" }),
    data: z.record(z.string(), z.unknown()).openapi({
      description:
        "job.created: {jobId, organizationId, projectId, state, workerPool, priority, attemptId, occurredAt}. " +
        "job.updated: {jobId, attemptId, organizationId, projectId, from, to, occurredAt}; a failed attempt adds failureCode; a next attempt (after a failed attempt, or an operator's retry) adds nextAttemptId and nextAttemptNumber; a pause adds reason, uploadPausedAt, uploadPauseExpiresAt; an attempt whose encode starts or stops waiting for storage to read its input adds waitingForInput ({since, lastError}, or null once it reads again), from and to both the job's state. " +
        "job.progress (at most once a second per job, from Manager memory, id prefixed progress-): {jobId, attemptId, workerId, percent, fps, bitrateKbps, speed, etaSeconds}. " +
        "worker.registered: {workerId, instanceId, name, pool, certification, connectivity}. " +
        "worker.updated: {workerId, instanceId, change} where change is connectivity (from, to), instance (previousInstanceId, from, to), drain (drainRequestedAt), drained, undrain, or disable (disabledAt).",
      example: {
        jobId: "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d",
        attemptId: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
        from: "QUEUED",
        to: "CANCELLED",
      },
    }),
  })
  .openapi("EventEnvelope");

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
