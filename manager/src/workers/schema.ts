import { z } from "@hono/zod-openapi";
import { WorkerPoolSchema } from "../jobs/schema.ts";
import { pageOf } from "../platform/query.ts";
import { uuidPathParam } from "../platform/routes.ts";
import { CONNECTIVITY_STATES } from "./store.ts";

export const ConnectivitySchema = z.enum(CONNECTIVITY_STATES).openapi("WorkerConnectivity", {
  description:
    "ONLINE while heartbeating; SUSPECTED after two missed intervals; OFFLINE after WORKER_LOST_AFTER_MS",
  example: "ONLINE",
});

export const CertificationStatusSchema = z.enum(["READY", "DEGRADED"]).openapi("WorkerCertificationStatus", {
  description: "READY when the pool's required encoders passed their self-test",
  example: "READY",
});

const timestamp = z.iso.datetime().openapi({ example: "2026-11-21T10:00:00.000Z" });

export const WorkerSchema = z
  .object({
    workerId: z.uuid().openapi({ example: "3f2b8c1e-7d4a-4e59-9b2c-6a1d0e8f7c35" }),
    instanceId: z.uuid().openapi({
      description: "Changes with every (re-)registration",
      example: "c81a5f0d-2e3b-4c7a-8d91-0f6e4b2a9d17",
    }),
    name: z.string().openapi({ example: "encoder-cpu-01" }),
    pool: WorkerPoolSchema,
    protocolVersion: z.number().int().openapi({ example: 3 }),
    connectivity: ConnectivitySchema,
    connectivityChangedAt: timestamp,
    certification: z.object({
      status: CertificationStatusSchema,
      reasons: z.array(z.string()).openapi({ example: [] }),
    }),
    conditions: z
      .array(
        z.object({
          type: z.enum(["DRAINING", "DRAINED", "DISABLED"]),
          since: timestamp,
        }),
      )
      .openapi({
        description:
          "DRAINING: takes no new leases (an operator asked it to drain). DRAINED: draining and holding nothing more. DISABLED: revoked by an operator; it cannot re-register or refresh its NATS credentials.",
        example: [{ type: "DRAINING", since: "2026-11-21T10:05:00.000Z" }],
      }),
    capacity: z.number().int().openapi({
      description: "Concurrent attempts it takes: min(profile.hostCapacity, profile.capacityCap)",
      example: 4,
    }),
    profile: z.object({
      hostCapacity: z
        .number()
        .int()
        .openapi({ description: "What the host supports (CPU cores, NVENC sessions)", example: 8 }),
      capacityCap: z
        .number()
        .int()
        .nullable()
        .openapi({ description: "The Worker's configured cap (WORKER_CAPACITY), if any", example: 4 }),
    }),
    capabilities: z.array(z.string()).openapi({ example: ["libx264", "aac", "scale"] }),
    hardwareEncoders: z
      .array(
        z.object({
          name: z.string(),
          status: z.enum(["PASSED", "FAILED"]),
          reason: z.string().optional(),
        }),
      )
      .openapi({
        description: "Every hardware encoder ffmpeg lists, with its self-test result",
        example: [
          { name: "h264_vaapi", status: "FAILED", reason: "no VA-API device at /dev/dri/renderD128" },
        ],
      }),
    ffmpegVersion: z.string().openapi({ example: "5.1.9-0+deb12u1" }),
    lastHeartbeatAt: timestamp.nullable(),
    activeAttempts: z
      .array(z.object({ attemptId: z.uuid(), fencingToken: z.string() }))
      .nullable()
      .openapi({
        description: "From the latest heartbeat this Manager saw; null before one arrives",
        example: [],
      }),
    freeCapacity: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "From the latest heartbeat; null before one arrives", example: 4 }),
    statistics: z
      .array(
        z.object({
          attemptId: z.uuid(),
          jobId: z.uuid(),
          percent: z.number(),
          fps: z.number().nullable(),
          bitrateKbps: z.number().nullable(),
          speed: z.number().nullable(),
          etaSeconds: z.number().nullable(),
          at: z.iso.datetime(),
        }),
      )
      .openapi({
        description:
          "Live figures of each attempt it encodes, from its progress updates (this Manager's memory)",
        example: [],
      }),
    registeredAt: timestamp,
    instanceStartedAt: timestamp,
    updatedAt: timestamp,
  })
  .openapi("Worker");

export const WorkerListSchema = pageOf("WorkerList", WorkerSchema, "Workers matching the filters");

export const WorkerIdParamSchema = z.object({
  workerId: uuidPathParam("workerId", "3f2b8c1e-7d4a-4e59-9b2c-6a1d0e8f7c35"),
});
