/**
 * The Manager's Prometheus metrics (issue 14) on real services: every documented series is
 * exported with its type, help and bounded labels, and the values move with what the test
 * does: submits, a lease, failures, stale reports, an SSE stream, an unpublished outbox row.
 * Then where /metrics is served (METRICS_PORT, METRICS_ENABLED) and who may read it
 * (METRICS_BEARER_TOKEN).
 */
import { connect } from "@nats-io/transport-node";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { type ManagerProcess, type ManagerRuntime, startManagerProcess } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET } from "@tjm/devstack/oidc-issuer";
import { freePort, waitFor } from "@tjm/devstack/services";
import { deleteStreams } from "@tjm/devstack/streams";
import { WORKER_POOLS } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAILURE_CODES } from "../../manager/src/lifecycle/failures.ts";
import { JOB_STATES } from "../../manager/src/lifecycle/states.ts";
import { MANAGER_SERIES, type ManagerSeriesName } from "../../manager/src/metrics/index.ts";
import { CONNECTIVITY_STATES } from "../../manager/src/workers/store.ts";
import { createTestSchema, TestManager, testServices } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";
import { subscribeEvents } from "../harness/sse.ts";
import { TcpProxy } from "../harness/tcp-proxy.ts";

// ---- the text format --------------------------------------------------------------------

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  type: string;
  help: string;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;

const numberOf = (text: string) =>
  text === "+Inf" ? Number.POSITIVE_INFINITY : text === "-Inf" ? Number.NEGATIVE_INFINITY : Number(text);

/** Families by name; each sample is checked to belong to the family announced above it. */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: { name: string; family: Family } | undefined;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      const family = families.get(name) ?? { type: "", help: "", samples: [] };
      families.set(name, family);
      if (kind === "HELP") family.help = rest.replaceAll("\\n", "\n").replaceAll("\\\\", "\\");
      else family.type = rest;
      current = { name, family };
      continue;
    }
    const sample = SAMPLE.exec(line);
    if (!sample || !current) throw new Error(`not a line of the text format: ${line}`);
    const [, name, labelText = "", value] = sample as unknown as [string, string, string | undefined, string];
    const suffixes = current.family.type === "histogram" ? ["_bucket", "_sum", "_count"] : [""];
    if (!suffixes.some((suffix) => name === `${current?.name}${suffix}`)) {
      throw new Error(`sample ${name} under the family ${current.name}`);
    }
    const labels = Object.fromEntries([...labelText.matchAll(LABEL)].map((m) => [m[1], m[2]]));
    current.family.samples.push({ name, labels: labels as Record<string, string>, value: numberOf(value) });
  }
  return families;
}

/** The one sample of `name` (a family, or a histogram's _count/_sum/_bucket) with exactly these labels. */
function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const family =
    families.get(name) ??
    families.get(name.replace(/_(count|sum|bucket)$/, "")) ??
    ({ samples: [] } as never);
  const matching = (family as Family).samples.filter(
    (sample) =>
      sample.name === name &&
      Object.keys(sample.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  if (matching.length !== 1)
    throw new Error(`${matching.length} samples of ${name} ${JSON.stringify(labels)}`);
  return (matching[0] as Sample).value;
}

async function scrape(url: string, init: RequestInit = {}): Promise<Map<string, Family>> {
  const response = await fetch(url, init);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${text}`);
  return parseExposition(text);
}

// ---- the labels' bounded sets ---------------------------------------------------------------

const KNOWN_FAILURE_CODES = [
  ...Object.values(FAILURE_CODES),
  ...["INPUT_NOT_FOUND", "INPUT_UNREADABLE", "INPUT_INCOMPATIBLE", "PLAN_UNSUPPORTED", "ENCODE_FAILED"],
  ...["STORAGE_ACCESS_DENIED", "STORAGE_BUCKET_NOT_FOUND", "STORAGE_UNAVAILABLE", "STORAGE_FAILED"],
  ...["WORKER_ERROR", "OTHER", "none"],
];

/** Every value each label of each series may take. */
const LABEL_VALUES: Record<ManagerSeriesName, Record<string, readonly string[]>> = {
  tjm_jobs: { state: JOB_STATES },
  tjm_queue_depth: { pool: WORKER_POOLS, priority_band: ["high", "normal", "low"] },
  tjm_job_submit_duration_seconds: {},
  tjm_dispatch_latency_seconds: { pool: WORKER_POOLS },
  tjm_attempt_outcomes_total: {
    outcome: ["succeeded", "failed", "cancelled"],
    failure_code: KNOWN_FAILURE_CODES,
  },
  tjm_outbox_backlog: {},
  tjm_outbox_oldest_age_seconds: {},
  tjm_stale_reports_total: {
    reason: [
      "unknown-attempt",
      "not-current-attempt",
      "fencing-token",
      "other-worker",
      "old-instance",
      "attempt-ended",
    ],
  },
  tjm_messages_total: { channel: ["email", "sms"], outcome: ["sent", "retried", "failed", "expired"] },
  tjm_backchannel_logouts_total: { outcome: ["sent", "retried", "failed"] },
  tjm_sse_subscribers: {},
  tjm_workers: { connectivity: CONNECTIVITY_STATES },
  tjm_nats_connected: {},
  tjm_nats_reconnects_total: {},
  tjm_postgres_pool_connections: { state: ["open", "busy", "max"] },
  tjm_postgres_waiting_queries: {},
};

/** 32+ characters, as METRICS_BEARER_TOKEN requires. */
const METRICS_TOKEN = "metrics-scraper-token-0123456789abcdef";

// ---- on the API port ------------------------------------------------------------------------

describe("the Manager's /metrics on the API port", () => {
  let manager: TestManager;
  let projectId: string;
  const metricsUrl = () => `${manager.baseUrl}/metrics`;

  beforeAll(async () => {
    manager = await TestManager.start({ heartbeatIntervalMs: 200, lostAfterMs: 2000 });
    ({ projectId } = await manager.createProject());
  });
  afterAll(async () => {
    await manager?.close();
  });

  it("exports every documented series with its type, help and only bounded labels, plus the process defaults", async () => {
    const response = await fetch(metricsUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const families = parseExposition(await response.text());
    for (const [name, spec] of Object.entries(MANAGER_SERIES) as [
      ManagerSeriesName,
      (typeof MANAGER_SERIES)[ManagerSeriesName],
    ][]) {
      const family = families.get(name);
      expect(family, name).toBeDefined();
      expect({ name, type: family?.type, help: family?.help }).toEqual({
        name,
        type: spec.type,
        help: spec.help,
      });
      expect(family?.samples.length, `${name} has samples`).toBeGreaterThan(0);
      for (const sample of family?.samples ?? []) {
        const names = Object.keys(sample.labels).filter(
          (label) => !(spec.type === "histogram" && label === "le"),
        );
        expect(names.sort(), `${sample.name} labels`).toEqual([...spec.labels].sort());
        for (const label of names) {
          expect(LABEL_VALUES[name][label], `${name}{${label}="${sample.labels[label]}"}`).toContain(
            sample.labels[label],
          );
        }
      }
    }
    // Every state, pool × band and connectivity from the start, 0 included.
    expect(families.get("tjm_jobs")?.samples).toHaveLength(JOB_STATES.length);
    expect(families.get("tjm_queue_depth")?.samples).toHaveLength(WORKER_POOLS.length * 3);
    expect(families.get("tjm_workers")?.samples).toHaveLength(CONNECTIVITY_STATES.length);
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_seconds",
    ]) {
      expect(families.get(name)?.samples.length, name).toBeGreaterThan(0);
    }
  });

  it("counts submitted jobs by state and by pool and priority band, times each submit, and counts their cancels", async () => {
    const before = await scrape(metricsUrl());
    const jobIds = [
      await manager.submitJob(sampleSubmission(projectId, { priority: 5 })),
      await manager.submitJob(sampleSubmission(projectId, { priority: 0 })),
      await manager.submitJob(sampleSubmission(projectId, { priority: -5 })),
      await manager.submitJob(
        sampleSubmission(projectId, { requirements: { requiredCapabilities: ["h264_nvenc"] } }),
      ),
    ];
    // A refused submit is timed too: request in to response, whatever the answer.
    const refused = await manager.request("/api/v1/operations/jobs", { method: "POST", json: { projectId } });
    expect(refused.status).toBe(400);
    const after = await scrape(metricsUrl());
    const grew = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);

    expect(grew("tjm_jobs", { state: "QUEUED" })).toBe(4);
    expect(grew("tjm_queue_depth", { pool: "cpu", priority_band: "high" })).toBe(1);
    expect(grew("tjm_queue_depth", { pool: "cpu", priority_band: "normal" })).toBe(1);
    expect(grew("tjm_queue_depth", { pool: "cpu", priority_band: "low" })).toBe(1);
    expect(grew("tjm_queue_depth", { pool: "nvidia", priority_band: "normal" })).toBe(1);
    expect(grew("tjm_queue_depth", { pool: "intel", priority_band: "normal" })).toBe(0);
    expect(grew("tjm_job_submit_duration_seconds_count")).toBe(5);
    expect(grew("tjm_job_submit_duration_seconds_sum")).toBeGreaterThan(0);
    // GETs of the same path are not submits.
    await manager.request("/api/v1/operations/jobs?limit=1");
    expect(sampleValue(await scrape(metricsUrl()), "tjm_job_submit_duration_seconds_count")).toBe(
      sampleValue(after, "tjm_job_submit_duration_seconds_count"),
    );

    for (const jobId of jobIds) {
      expect(
        (await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" })).status,
      ).toBe(202);
    }
    const cancelled = { outcome: "cancelled", failure_code: "none" };
    await waitFor("the four cancelled attempts counted", async () => {
      const now = await scrape(metricsUrl());
      return (
        sampleValue(now, "tjm_attempt_outcomes_total", cancelled) -
          sampleValue(before, "tjm_attempt_outcomes_total", cancelled) ===
        4
      );
    });
    const settled = await scrape(metricsUrl());
    expect(
      sampleValue(settled, "tjm_jobs", { state: "CANCELLED" }) -
        sampleValue(before, "tjm_jobs", { state: "CANCELLED" }),
    ).toBe(4);
    expect(sampleValue(settled, "tjm_queue_depth", { pool: "cpu", priority_band: "high" })).toBe(
      sampleValue(before, "tjm_queue_depth", { pool: "cpu", priority_band: "high" }),
    );
  });

  it("observes a lease's dispatch latency, counts failed attempts by failure code and stale reports by reason", async () => {
    const worker = await ProtocolWorker.start(manager);
    try {
      const before = await scrape(metricsUrl());
      const grew = (now: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
        sampleValue(now, name, labels) - sampleValue(before, name, labels);

      const submittedAt = Date.now();
      const jobId = await manager.submitJob(sampleSubmission(projectId));
      const lease = await worker.nextLease(jobId);
      let observed: Map<string, Family> = before;
      await waitFor("the lease's dispatch latency observed", async () => {
        observed = await scrape(metricsUrl());
        return grew(observed, "tjm_dispatch_latency_seconds_count", { pool: "cpu" }) === 1;
      });
      const elapsedSeconds = (Date.now() - submittedAt) / 1000;
      const latency = grew(observed, "tjm_dispatch_latency_seconds_sum", { pool: "cpu" });
      // From the attempt's creation (after submittedAt) to its publication (before this scrape).
      expect(latency).toBeGreaterThan(0);
      expect(latency).toBeLessThanOrEqual(elapsedSeconds);
      expect(grew(observed, "tjm_dispatch_latency_seconds_count", { pool: "nvidia" })).toBe(0);

      await worker.report("accepted", lease);
      await manager.untilJob(jobId, "RUNNING");
      await worker.report("failed", lease, {
        failureCode: "ENCODE_FAILED",
        failureMessage: "ffmpeg exited 1",
      });
      await manager.untilJob(jobId, "FAILED");
      // A code TJM does not know is counted, under OTHER: a Worker cannot grow the label set.
      const otherJob = await manager.submitJob(sampleSubmission(projectId));
      const otherLease = await worker.nextLease(otherJob);
      await worker.report("failed", otherLease, { failureCode: "VENDOR_SPECIFIC_1234", failureMessage: "?" });
      await manager.untilJob(otherJob, "FAILED");
      // Stale: the ended attempt reported on again, and an attempt nobody knows.
      await worker.report("accepted", lease);
      await worker.report("accepted", { attemptId: crypto.randomUUID(), fencingToken: lease.fencingToken });

      await waitFor("the failures and stale reports counted", async () => {
        const now = await scrape(metricsUrl());
        return (
          grew(now, "tjm_attempt_outcomes_total", { outcome: "failed", failure_code: "ENCODE_FAILED" }) ===
            1 &&
          grew(now, "tjm_attempt_outcomes_total", { outcome: "failed", failure_code: "OTHER" }) === 1 &&
          grew(now, "tjm_stale_reports_total", { reason: "attempt-ended" }) === 1 &&
          grew(now, "tjm_stale_reports_total", { reason: "unknown-attempt" }) === 1
        );
      });
      const now = await scrape(metricsUrl());
      expect(
        now
          .get("tjm_attempt_outcomes_total")
          ?.samples.some((s) => s.labels.failure_code === "VENDOR_SPECIFIC_1234"),
      ).toBe(false);
      expect(grew(now, "tjm_attempt_outcomes_total", { outcome: "succeeded", failure_code: "none" })).toBe(0);
      expect(grew(now, "tjm_dispatch_latency_seconds_count", { pool: "cpu" })).toBe(2);
      expect(grew(now, "tjm_jobs", { state: "FAILED" })).toBe(2);
      // The Worker heartbeats: it is counted ONLINE, and every stored Worker is counted once.
      expect(sampleValue(now, "tjm_workers", { connectivity: "ONLINE" })).toBeGreaterThanOrEqual(1);
      const [stored] = await manager.sql<{ count: number }[]>`select count(*)::int as count from workers`;
      const counted = CONNECTIVITY_STATES.reduce(
        (sum, connectivity) => sum + sampleValue(now, "tjm_workers", { connectivity }),
        0,
      );
      expect(counted).toBe(stored?.count);
    } finally {
      await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, { method: "POST" });
      await worker.stop();
    }
  });

  it("counts this process's open SSE streams: 1 while one is open, 0 once it closed", async () => {
    expect(sampleValue(await scrape(metricsUrl()), "tjm_sse_subscribers")).toBe(0);
    const stream = await subscribeEvents(manager);
    expect(sampleValue(await scrape(metricsUrl()), "tjm_sse_subscribers")).toBe(1);
    await stream.close();
    await waitFor(
      "the closed stream uncounted",
      async () => sampleValue(await scrape(metricsUrl()), "tjm_sse_subscribers") === 0,
    );
  });

  it("reports this process's NATS link and PostgreSQL pool", async () => {
    const families = await scrape(metricsUrl());
    expect(sampleValue(families, "tjm_nats_connected")).toBe(1);
    expect(sampleValue(families, "tjm_nats_reconnects_total")).toBe(0);
    // The harness's pool (poolMax 8); the scrape's own query holds one connection while it runs.
    const pool = (state: string) => sampleValue(families, "tjm_postgres_pool_connections", { state });
    expect(pool("max")).toBe(8);
    expect(pool("open")).toBeGreaterThanOrEqual(1);
    expect(pool("open")).toBeLessThanOrEqual(8);
    expect(pool("busy")).toBeLessThanOrEqual(pool("open"));
    expect(sampleValue(families, "tjm_postgres_waiting_queries")).toBeGreaterThanOrEqual(0);
  });
});

// ---- who may read it, and an outbox nobody publishes -------------------------------------

describe("METRICS_BEARER_TOKEN, on a Manager whose relay does not run", () => {
  let manager: TestManager;
  const metricsUrl = () => `${manager.baseUrl}/metrics`;

  beforeAll(async () => {
    // background: false: nothing publishes the outbox, so its backlog stays where the test puts it.
    manager = await TestManager.start({ background: false, env: { METRICS_BEARER_TOKEN: METRICS_TOKEN } });
  });
  afterAll(async () => {
    await manager?.close();
  });

  it.each([
    ["no Authorization header", undefined],
    ["a wrong token of the same length", `Bearer ${METRICS_TOKEN.slice(0, -1)}X`],
    ["the token with another scheme", `Basic ${METRICS_TOKEN}`],
    ["an operator's access token", "operator"],
  ])("refuses a scrape with %s (401)", async (_, authorization) => {
    const headers: Record<string, string> = {};
    if (authorization === "operator") headers.authorization = `Bearer ${await manager.operatorToken()}`;
    else if (authorization) headers.authorization = authorization;
    const response = await fetch(metricsUrl(), { headers });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect(await response.json()).toEqual({
      statusCode: 401,
      error: "Unauthorized",
      message: "Scraping /metrics needs the bearer token METRICS_BEARER_TOKEN",
      code: "auth.token_invalid",
      requestId: response.headers.get("x-request-id"),
    });
  });

  it("serves the token's holder, and reports an unpublished outbox row with its age", async () => {
    const auth = { headers: { authorization: `Bearer ${METRICS_TOKEN}` } };
    const before = await scrape(metricsUrl(), auth);
    expect(sampleValue(before, "tjm_outbox_backlog")).toBe(0);
    expect(sampleValue(before, "tjm_outbox_oldest_age_seconds")).toBe(0);
    const { projectId } = await manager.createProject();
    const submittedAt = Date.now();
    await manager.submitJob(sampleSubmission(projectId));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await scrape(metricsUrl(), auth);
    const elapsedSeconds = (Date.now() - submittedAt) / 1000;
    // The job.created announcement, waiting for a relay.
    expect(sampleValue(after, "tjm_outbox_backlog")).toBe(1);
    expect(sampleValue(after, "tjm_outbox_oldest_age_seconds")).toBeGreaterThanOrEqual(0.3);
    expect(sampleValue(after, "tjm_outbox_oldest_age_seconds")).toBeLessThanOrEqual(elapsedSeconds);
  });
});

describe("METRICS_ENABLED=false", () => {
  it("serves no /metrics and builds no instruments", async () => {
    const manager = await TestManager.start({ background: false, env: { METRICS_ENABLED: "false" } });
    try {
      expect(manager.manager.metrics.endpoint).toBe("none");
      expect((await fetch(`${manager.baseUrl}/metrics`)).status).toBe(404);
    } finally {
      await manager.close();
    }
  });
});

describe("the NATS link, through a proxy the test cuts", () => {
  it("reports the connection down while it is, and counts the reconnect", async () => {
    const nats = new URL(testServices().natsUrl);
    const proxy = await TcpProxy.start({ host: nats.hostname, port: Number(nats.port) });
    const manager = await TestManager.start({ background: false, natsUrl: `nats://127.0.0.1:${proxy.port}` });
    const link = async () => {
      const families = await scrape(`${manager.baseUrl}/metrics`);
      return {
        connected: sampleValue(families, "tjm_nats_connected"),
        reconnects: sampleValue(families, "tjm_nats_reconnects_total"),
      };
    };
    try {
      await waitFor("the first connection", async () => (await link()).connected === 1);
      expect(await link()).toEqual({ connected: 1, reconnects: 0 });
      await proxy.cut();
      await waitFor("the connection reported down", async () => (await link()).connected === 0);
      expect((await link()).reconnects).toBe(0);
      await proxy.restore();
      // The client retries every second (broker.ts: reconnectTimeWait).
      await waitFor("the reconnect reported", async () => (await link()).connected === 1);
      expect(await link()).toEqual({ connected: 1, reconnects: 1 });
    } finally {
      await manager.close();
      await proxy.close();
    }
  });
});

// ---- on a port of its own, as the entrypoints serve it ---------------------------------------

describe.each<ManagerRuntime>(["node", "deno"])("METRICS_PORT on the %s Manager", (runtime) => {
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let managerProcess: ManagerProcess;
  let metricsPort: number;

  beforeAll(async () => {
    const services = testServices();
    schema = await createTestSchema(services.databaseUrl);
    metricsPort = await freePort();
    managerProcess = await startManagerProcess(runtime, {
      DATABASE_URL: services.databaseUrl,
      DATABASE_SCHEMA: schema.schema,
      NATS_URL: services.natsUrl,
      NATS_AUTH: "none",
      NATS_SUBJECT_PREFIX: schema.schema,
      // No token is verified here: /metrics is not behind the API's authentication.
      PROVIDER_ENABLED: "false",
      OIDC_ISSUER_URL: "http://127.0.0.1:1/oidc",
      OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
      ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
      S3_ENDPOINT: "http://127.0.0.1:1",
      S3_ACCESS_KEY_ID: "unused",
      S3_SECRET_ACCESS_KEY: "unused",
      METRICS_PORT: String(metricsPort),
      METRICS_BEARER_TOKEN: METRICS_TOKEN,
      LOG_LEVEL: "warn",
    });
  }, 90_000);
  afterAll(async () => {
    await managerProcess?.stop();
    const nc = await connect({ servers: testServices().natsUrl });
    await deleteStreams(nc, schema.schema).catch(() => {});
    await nc.close();
    await schema?.drop();
  });

  it("serves /metrics only on METRICS_HOST:METRICS_PORT, with the token, and nothing else there", async () => {
    const auth = { headers: { authorization: `Bearer ${METRICS_TOKEN}` } };
    expect((await fetch(`${managerProcess.baseUrl}/metrics`, auth)).status).toBe(404);
    const own = `http://127.0.0.1:${metricsPort}`;
    const refused = await fetch(`${own}/metrics`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("x-content-type-options")).toBe("nosniff");
    const families = await scrape(`${own}/metrics`, auth);
    for (const name of Object.keys(MANAGER_SERIES)) expect(families.has(name), name).toBe(true);
    expect(sampleValue(families, "tjm_nats_connected")).toBe(1);
    expect(sampleValue(families, "tjm_postgres_pool_connections", { state: "max" })).toBe(10);
    expect(families.get("process_resident_memory_bytes")?.samples.length).toBeGreaterThan(0);
    expect((await fetch(`${own}/api/health/ready`, auth)).status).toBe(404);
  });
});
