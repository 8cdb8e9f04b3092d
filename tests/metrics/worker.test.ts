/**
 * The Worker agent's /metrics: every series of WORKER_SERIES scraped from a real agent on Bun
 * (real ffmpeg, s3rver behind a proxy the test cuts, the Manager in-process) with its type and
 * help, and the values that one job and one storage outage move. The meter arithmetic (fps
 * summed over runs, frames from ffmpeg's running total) is checked in-process first.
 */
import { type AgentProcess, agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { freePort, waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WORKER_SERIES } from "../../worker-agent/src/metrics/series.ts";
import { BUN_STUBBED_DEFAULTS, WorkerMetrics } from "../../worker-agent/src/metrics/worker-metrics.ts";
import { TestManager } from "../harness/manager.ts";
import { putClip, readObject, startTestAgent, twoOutputPlan } from "../harness/media-jobs.ts";
import { TcpProxy } from "../harness/tcp-proxy.ts";

// Real encodes share two cores with every other test file: generous, not tight, limits.
vi.setConfig({ testTimeout: 120_000 });

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  type: string | undefined;
  help: string | undefined;
  samples: Sample[];
}

/** The Prometheus text format, strictly: a sample of a family without TYPE and HELP fails. */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string) => {
    const found = families.get(name) ?? { type: undefined, help: undefined, samples: [] };
    families.set(name, found);
    return found;
  };
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (kind === "HELP") family(name).help = rest;
      else family(name).type = rest;
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText, value] = sample as unknown as [string, string, string | undefined, string];
    const labels = Object.fromEntries(
      [...(labelText ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    const owner = [name, name.replace(/_(bucket|sum|count)$/, "")].find((n) => families.has(n));
    if (!owner) throw new Error(`sample of an undeclared family: ${line}`);
    family(owner).samples.push({ name, labels, value: Number(value) });
  }
  for (const [name, { type, help }] of families) {
    if (!type || help === undefined) throw new Error(`${name} lacks its TYPE or HELP line`);
  }
  return families;
}

/** The one value of a series, or of the sample with these labels. */
function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}) {
  const found = families
    .get(name)
    ?.samples.filter((s) => Object.entries(labels).every(([key, value]) => s.labels[key] === value));
  if (found?.length !== 1)
    throw new Error(`${name} ${JSON.stringify(labels)}: ${found?.length ?? 0} samples`);
  return (found[0] as Sample).value;
}

/** Every WORKER_SERIES family with its documented type, help, and only its documented labels. */
function expectEverySeries(families: Map<string, Family>): void {
  for (const [name, spec] of Object.entries(WORKER_SERIES)) {
    const family = families.get(name);
    expect(family, name).toBeDefined();
    expect(family?.type, name).toBe(spec.type);
    expect(family?.help, name).toBe(spec.help);
    expect(family?.samples.length, name).toBeGreaterThan(0);
    for (const sample of family?.samples ?? []) {
      expect(Object.keys(sample.labels).sort(), name).toEqual([...spec.labels].sort());
    }
  }
}

describe("WorkerMetrics in-process", () => {
  it("sums the latest fps of the runs in progress, counts frames from ffmpeg's running total", async () => {
    const metrics = new WorkerMetrics({ defaultMetrics: false });
    const first = metrics.encodeMeter();
    const second = metrics.encodeMeter();
    first.observe({ fps: 20, frames: 40 });
    first.observe({ fps: 25, frames: 100 });
    second.observe({ fps: 10, frames: 30 });
    // A block without video (audio only) adds no frames.
    second.observe({ fps: null });
    let families = parseExposition(await metrics.text());
    expect(sampleValue(families, "tjm_worker_encode_fps")).toBe(25);
    expect(sampleValue(families, "tjm_worker_encoded_frames_total")).toBe(130);
    first.end();
    first.observe({ fps: 99, frames: 500 });
    second.end();
    families = parseExposition(await metrics.text());
    expect(sampleValue(families, "tjm_worker_encode_fps")).toBe(0);
    expect(sampleValue(families, "tjm_worker_encoded_frames_total")).toBe(130);
  });

  it("shows every operation and outcome at zero before the first event, and only the registry's own series", async () => {
    const families = parseExposition(await new WorkerMetrics({ defaultMetrics: false }).text());
    expectEverySeries(families);
    expect([...families.keys()].sort()).toEqual(Object.keys(WORKER_SERIES).sort());
    expect(
      families
        .get("tjm_worker_retries_total")
        ?.samples.map((s) => s.labels.operation)
        .sort(),
    ).toEqual(["complete_upload", "registration", "report_publish", "upload_part"]);
    expect(families.get("tjm_worker_attempts_total")?.samples.every((s) => s.value === 0)).toBe(true);
  });
});

describe("a real agent's /metrics", () => {
  let s3: S3Server;
  let proxy: TcpProxy;
  let manager: TestManager;
  let projectId: string;
  let scratch: Awaited<ReturnType<typeof agentDirs>>;
  let agent: AgentProcess;
  let metricsUrl: string;

  beforeAll(async () => {
    s3 = await startS3({ buckets: ["media-in", "media-out"] });
    proxy = await TcpProxy.start({ host: "127.0.0.1", port: s3.port });
    manager = await TestManager.start({
      storage: { ...s3.settings, endpoint: `http://127.0.0.1:${proxy.port}` },
      heartbeatIntervalMs: 300,
      lostAfterMs: 5000,
      dispatchTimeoutMs: 10_000,
    });
    ({ projectId } = await manager.createProject());
    scratch = await agentDirs();
    // short: a quick job; long: still encoding when the test takes storage away.
    await putClip(s3, { bucket: "media-in", key: "short.mp4" }, 4, "320x240");
    await putClip(s3, { bucket: "media-in", key: "long.mp4" }, 20, "320x240");
    const port = await freePort();
    agent = await startTestAgent(manager, scratch.root, "metrics", {
      WORKER_METRICS_PORT: String(port),
      // Downloaded, not streamed: the storage wait below cuts storage mid-encode and needs the input local.
      WORKER_INPUT_STREAMING: "off",
      WORKER_UPLOAD_RETRY_BUDGET_MS: "1500",
      WORKER_UPLOAD_RETRY_ATTEMPTS: "2",
    });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
  }, 120_000);

  afterAll(async () => {
    await killAgents();
    await manager?.close();
    await proxy?.close();
    await s3?.stop();
    await scratch?.cleanup();
  });

  const scrape = async () => {
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    return parseExposition(await response.text());
  };
  const submit = (input: string, prefix: string) =>
    manager.submitJob({ projectId, executionPlan: twoOutputPlan(`s3://media-in/${input}`, prefix) });
  const until = (jobId: string, state: string) => manager.untilJob(jobId, state, { timeoutMs: 90_000 });
  /** The attempt is released (files deleted) a moment after its last report: wait for that. */
  const untilIdle = () =>
    waitFor(
      "tjm_worker_active_attempts back to 0",
      async () => sampleValue(await scrape(), "tjm_worker_active_attempts") === 0,
      10_000,
      50,
    );

  it("serves every series with its type and help, the Bun-safe process metrics, and nothing else on the port", async () => {
    expect(agent.logs.find((line) => line.msg === "serving metrics")).toMatchObject({ url: metricsUrl });
    const families = await scrape();
    expectEverySeries(families);
    for (const name of [
      "tjm_worker_active_attempts",
      "tjm_worker_encode_fps",
      "tjm_worker_waiting_for_storage",
    ])
      expect(sampleValue(families, name), name).toBe(0);
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "process_open_fds",
      "nodejs_eventloop_lag_seconds",
      "nodejs_heap_size_used_bytes",
    ]) {
      expect(families.get(name)?.samples.length, name).toBeGreaterThan(0);
    }
    expect(sampleValue(families, "process_resident_memory_bytes")).toBeGreaterThan(0);
    for (const name of BUN_STUBBED_DEFAULTS) expect(families.has(name), name).toBe(false);
    expect((await fetch(metricsUrl.replace("/metrics", "/"))).status).toBe(404);
    expect((await fetch(metricsUrl, { method: "POST" })).status).toBe(405);
  });

  it("one job: attempts succeeded 1, its outputs' bytes uploaded, frames encoded, back to no active attempt", async () => {
    const jobId = await submit("short.mp4", "counted");
    const done = await until(jobId, "COMPLETED");
    await untilIdle();
    const families = await scrape();
    expectEverySeries(families);
    expect(sampleValue(families, "tjm_worker_attempts_total", { outcome: "succeeded" })).toBe(1);
    expect(sampleValue(families, "tjm_worker_attempts_total", { outcome: "failed" })).toBe(0);
    expect(sampleValue(families, "tjm_worker_attempts_total", { outcome: "cancelled" })).toBe(0);
    // Exactly the outputs' bytes: every part once, and the log (a plain PUT) not counted.
    const manifest = JSON.parse((await readObject(s3, "s3://media-out/counted/manifest.json")).toString());
    const outputBytes = manifest.outputs.reduce(
      (sum: number, output: { bytes: number }) => sum + output.bytes,
      0,
    );
    expect(outputBytes).toBeGreaterThan(0);
    expect(sampleValue(families, "tjm_worker_upload_bytes_total")).toBe(outputBytes);
    // 4 s at 25 fps: ffmpeg's final frame count.
    expect(sampleValue(families, "tjm_worker_encoded_frames_total")).toBe(100);
    expect(sampleValue(families, "tjm_worker_encode_fps")).toBe(0);
    expect(sampleValue(families, "tjm_worker_storage_waits_total")).toBe(0);
    for (const sample of families.get("tjm_worker_retries_total")?.samples ?? [])
      expect(sample.value, sample.labels.operation).toBe(0);
    expect(done.attempts).toHaveLength(1);
  });

  it("storage cut during the encode: one storage wait, one attempt waiting, then none once resumed", async () => {
    const jobId = await submit("long.mp4", "waited");
    const attemptId = (await manager.job(jobId)).currentAttemptId;
    await agent.waitForLog((line) => line.msg === "encoding" && line.attemptId === attemptId, 60_000);
    await proxy.cut();
    try {
      await until(jobId, "WAITING_FOR_STORAGE");
      let families = await scrape();
      expect(sampleValue(families, "tjm_worker_storage_waits_total")).toBe(1);
      expect(sampleValue(families, "tjm_worker_waiting_for_storage")).toBe(1);
      // Paused, not released: it keeps its encoded files until resume-uploads.
      expect(sampleValue(families, "tjm_worker_active_attempts")).toBe(1);
      expect(sampleValue(families, "tjm_worker_encode_fps")).toBe(0);
      expect(sampleValue(families, "tjm_worker_encoded_frames_total")).toBe(100 + 500);
      await proxy.restore();
      const resumed = await manager.request(`/api/v1/operations/jobs/${jobId}/resume-uploads`, {
        method: "POST",
      });
      expect(resumed.status).toBe(202);
      await until(jobId, "COMPLETED");
      await untilIdle();
      families = await scrape();
      expect(sampleValue(families, "tjm_worker_waiting_for_storage")).toBe(0);
      expect(sampleValue(families, "tjm_worker_storage_waits_total")).toBe(1);
      expect(sampleValue(families, "tjm_worker_attempts_total", { outcome: "succeeded" })).toBe(2);
    } finally {
      await proxy.restore();
    }
  });
});
