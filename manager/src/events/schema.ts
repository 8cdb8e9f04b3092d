/**
 * The operational events as clients receive them: the kinds and the envelope, read by the hub
 * from the events stream and documented by the stream route.
 */
import { z } from "@hono/zod-openapi";

export const EVENT_KINDS = [
  "job.created",
  "job.updated",
  "job.progress",
  "worker.registered",
  "worker.updated",
] as const;

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
