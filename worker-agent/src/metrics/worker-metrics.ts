/**
 * The Worker agent's Prometheus metrics (series.ts lists them) in a registry of its own, not
 * prom-client's global one, so tests can build several in one process. The code that changes a
 * value calls one method here; nothing else knows about prom-client. This room imports no
 * other room of the agent, so every room may report to it.
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import {
  ATTEMPT_OUTCOMES,
  type AttemptOutcome,
  RETRY_OPERATIONS,
  type RetryOperation,
  WORKER_SERIES,
  type WorkerSeriesName,
} from "./series.ts";

/**
 * prom-client defaults that Bun answers with stubs: heap spaces all 0, active handles,
 * requests and resources always 0, no GC entries ever observed, and a "Node version" that is
 * the one Bun imitates. Exported as they are they would read as facts; the other defaults
 * (CPU, memory, file descriptors, event-loop lag, heap size) measure what they say on Bun too.
 */
export const BUN_STUBBED_DEFAULTS = [
  "nodejs_heap_space_size_total_bytes",
  "nodejs_heap_space_size_used_bytes",
  "nodejs_heap_space_size_available_bytes",
  "nodejs_active_handles",
  "nodejs_active_handles_total",
  "nodejs_active_requests",
  "nodejs_active_requests_total",
  "nodejs_active_resources",
  "nodejs_active_resources_total",
  "nodejs_gc_duration_seconds",
  "nodejs_version_info",
] as const;

export interface WorkerMetricsOptions {
  /** prom-client's process and runtime metrics; default true. */
  defaultMetrics?: boolean;
}

/** One ffmpeg run's share of the encode series; end() once ffmpeg has exited. */
export interface EncodeMeter {
  /** A progress block of the run: its fps, and ffmpeg's running frame total when it prints one. */
  observe(update: { fps: number | null; frames?: number | undefined }): void;
  end(): void;
}

export class WorkerMetrics {
  readonly registry = new Registry();
  /** Latest fps of each ffmpeg run in progress. */
  private readonly fpsByRun = new Map<EncodeMeter, number>();
  private readonly activeAttempts = this.gauge("tjm_worker_active_attempts");
  private readonly encodedFrames = this.counter("tjm_worker_encoded_frames_total");
  private readonly uploadBytes = this.counter("tjm_worker_upload_bytes_total");
  private readonly retries = this.counter("tjm_worker_retries_total");
  private readonly storageWaits = this.counter("tjm_worker_storage_waits_total");
  private readonly waitingForStorage = this.gauge("tjm_worker_waiting_for_storage");
  private readonly waitingForInput = this.gauge("tjm_worker_waiting_for_input");
  private readonly attempts = this.counter("tjm_worker_attempts_total");

  constructor(options: WorkerMetricsOptions = {}) {
    const fpsByRun = this.fpsByRun;
    this.gauge("tjm_worker_encode_fps", function collect() {
      let sum = 0;
      for (const fps of fpsByRun.values()) sum += fps;
      this.set(sum);
    });
    // Every label value from the start, so a rate() has its zero before the first event.
    for (const operation of RETRY_OPERATIONS) this.retries.inc({ operation }, 0);
    for (const outcome of ATTEMPT_OUTCOMES) this.attempts.inc({ outcome }, 0);
    if (options.defaultMetrics ?? true) {
      collectDefaultMetrics({ register: this.registry });
      if (process.versions.bun) {
        for (const name of BUN_STUBBED_DEFAULTS) this.registry.removeSingleMetric(name);
      }
    }
  }

  /** The text exposition format, as GET /metrics answers. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  attemptHeld(): void {
    this.activeAttempts.inc();
  }

  attemptReleased(): void {
    this.activeAttempts.dec();
  }

  attemptEnded(outcome: AttemptOutcome): void {
    this.attempts.inc({ outcome });
  }

  partUploaded(bytes: number): void {
    this.uploadBytes.inc(bytes);
  }

  retried(operation: RetryOperation): void {
    this.retries.inc({ operation });
  }

  /** An attempt paused its uploads (WAITING_FOR_STORAGE); counted once per pause. */
  storageWaitEntered(): void {
    this.storageWaits.inc();
  }

  /** An attempt waits for resume-uploads (also one the previous instance left paused). */
  waitingStarted(): void {
    this.waitingForStorage.inc();
  }

  waitingEnded(): void {
    this.waitingForStorage.dec();
  }

  /** An attempt's reads of its input wait for the store (input-wait.ts), or stopped waiting. */
  inputWaitChanged(waiting: boolean): void {
    if (waiting) this.waitingForInput.inc();
    else this.waitingForInput.dec();
  }

  encodeMeter(): EncodeMeter {
    const { fpsByRun, encodedFrames } = this;
    // ffmpeg's frame figure is a running total for the run: the counter takes what it adds.
    let frames = 0;
    let ended = false;
    const meter: EncodeMeter = {
      observe(update) {
        if (ended) return;
        if (update.frames !== undefined && update.frames > frames) {
          encodedFrames.inc(update.frames - frames);
          frames = update.frames;
        }
        fpsByRun.set(meter, update.fps ?? 0);
      },
      end() {
        ended = true;
        fpsByRun.delete(meter);
      },
    };
    return meter;
  }

  private counter(name: WorkerSeriesName): Counter {
    const { help, labels } = WORKER_SERIES[name];
    return new Counter({ name, help, labelNames: [...labels], registers: [this.registry] });
  }

  private gauge(name: WorkerSeriesName, collect?: (this: Gauge) => void): Gauge {
    const { help, labels } = WORKER_SERIES[name];
    return new Gauge({
      name,
      help,
      labelNames: [...labels],
      registers: [this.registry],
      ...(collect ? { collect } : {}),
    });
  }
}
