import { createRoute, z } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import type { EventEnvelope } from "../outbox/relay.ts";
import { errorResponses } from "../platform/errors.ts";
import { type AppRouteHandler, operatorSecurity } from "../platform/http.ts";
import type { EventHub } from "./hub.ts";

export const EVENT_KINDS = [
  "job.created",
  "job.updated",
  "job.progress",
  "worker.registered",
  "worker.updated",
] as const;

/** How long a new subscriber waits for the events stream before "connected" is sent anyway. */
const READY_WAIT_MS = 5000;

/** 15 s: well inside the idle timeouts of common proxies and load balancers. */
export const KEEP_ALIVE_MS = 15_000;

export const EventEnvelopeSchema = z
  .object({
    id: z
      .string()
      .openapi({ description: "Event id (the outbox row id); clients dedupe by it", example: "1042" }),
    kind: z.enum(EVENT_KINDS).openapi({ example: "job.updated" }),
    occurredAt: z.iso.datetime().openapi({ example: "2026-11-21T10:00:00.000Z" }),
    data: z.record(z.string(), z.unknown()).openapi({
      description:
        "job.created: {jobId, organizationId, projectId, state, workerPool, priority, attemptId, occurredAt}. " +
        "job.updated: {jobId, attemptId, organizationId, projectId, from, to, occurredAt} (retries add attemptNumber, workerPool, priority).",
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

export const streamEventsRoute = createRoute({
  method: "get",
  path: "/events",
  tags: ["events"],
  summary: "Stream operational events (Server-Sent Events)",
  description:
    "text/event-stream of lifecycle changes as they are published: each message has `id`, `event` (the kind) and `data` (the EventEnvelope as JSON), plus a `: keep-alive` comment every 15 s. Transient: after reconnecting, refetch the REST resources.",
  security: operatorSecurity,
  request: { query: EventsQuerySchema },
  responses: {
    200: {
      description: "The stream; each data line is an EventEnvelope",
      content: { "text/event-stream": { schema: EventEnvelopeSchema } },
    },
    ...errorResponses("BAD_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "INTERNAL"),
  },
});

function matches(
  event: EventEnvelope,
  kinds: readonly string[] | undefined,
  jobId: string | undefined,
): boolean {
  if (kinds && !kinds.includes(event.kind)) return false;
  return jobId === undefined || event.data.jobId === jobId;
}

export const streamEvents =
  (hub: EventHub): AppRouteHandler<typeof streamEventsRoute> =>
  (c) => {
    const { kinds, jobId } = c.req.valid("query");
    // Reverse proxies (nginx) must not buffer the stream.
    c.header("x-accel-buffering", "no");
    c.header("cache-control", "no-cache");
    return streamSSE(c, async (stream) => {
      const { unsubscribe, ready } = hub.subscribe((event) => {
        if (!matches(event, kinds, jobId)) return;
        void stream.writeSSE({ id: event.id, event: event.kind, data: JSON.stringify(event) });
      });
      const aborted = new Promise<void>((resolve) => stream.onAbort(resolve));
      const keepAlive = setInterval(() => void stream.write(": keep-alive\n\n"), KEEP_ALIVE_MS);
      // "connected" once events flow (or after a bounded wait while NATS is away).
      await Promise.race([ready, aborted, new Promise((resolve) => setTimeout(resolve, READY_WAIT_MS))]);
      await stream.write(": connected\n\n");
      await aborted;
      clearInterval(keepAlive);
      unsubscribe();
    }) as never;
  };
