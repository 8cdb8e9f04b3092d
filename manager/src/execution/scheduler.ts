/**
 * The scheduling choice, without I/O: which queued job goes to which Worker. The dispatcher
 * loads the candidates, calls chooseAssignments and writes the leases in one transaction.
 */
import { encodersNeeded, type WorkerPool } from "@tjm/protocol";

export interface QueuedJob {
  jobId: string;
  pool: WorkerPool;
  requiredCapabilities: string[];
  outputs: { video?: { codec: string } | undefined; audio?: { codec: string } | undefined }[];
  protocolVersion: number;
}

export interface CandidateWorker {
  workerId: string;
  pool: WorkerPool;
  protocolVersion: number;
  capabilities: string[];
  /** min(host capacity, cap). */
  capacity: number;
  /** Attempts it holds that occupy a slot (dispatched, running, uploading). */
  load: number;
}

/** Every capability a job needs on its pool: the client's requirements and each output's encoder. */
export function capabilitiesNeeded(job: QueuedJob): string[] {
  return [...new Set([...job.requiredCapabilities, ...encodersNeeded(job.pool, job.outputs)])].sort();
}

/**
 * Whether `worker` may run `job`. A DEGRADED Worker failed some of its pool's required
 * self-tests; like a READY one it takes only jobs whose every need it proved it can meet.
 */
function canRun(
  worker: CandidateWorker & { has: ReadonlySet<string> },
  job: QueuedJob,
  needed: readonly string[],
): boolean {
  if (worker.pool !== job.pool || worker.protocolVersion !== job.protocolVersion) return false;
  if (worker.load >= worker.capacity) return false;
  // READY or DEGRADED, a Worker takes only what it proved it can encode.
  return needed.every((capability) => worker.has.has(capability));
}

/**
 * Jobs in the order given (priority, then age) each go to the least-loaded eligible Worker
 * (lowest load/capacity, then lowest load, then id for a stable choice). A job no Worker can
 * take is skipped, not blocking the jobs behind it that another Worker can run.
 */
export function chooseAssignments(
  jobs: readonly QueuedJob[],
  workers: readonly CandidateWorker[],
): { jobId: string; workerId: string }[] {
  // Copies (their load grows as jobs are assigned), each with its capabilities as a set once.
  const pool = workers.map((worker) => ({ ...worker, has: new Set(worker.capabilities) }));
  const assignments: { jobId: string; workerId: string }[] = [];
  for (const job of jobs) {
    const needed = capabilitiesNeeded(job);
    let best: (typeof pool)[number] | undefined;
    for (const worker of pool) {
      if (!canRun(worker, job, needed)) continue;
      if (!best || lessLoaded(worker, best)) best = worker;
    }
    if (!best) continue;
    best.load++;
    assignments.push({ jobId: job.jobId, workerId: best.workerId });
  }
  return assignments;
}

function lessLoaded(a: CandidateWorker, b: CandidateWorker): boolean {
  const ratio = a.load / a.capacity - b.load / b.capacity;
  if (ratio !== 0) return ratio < 0;
  if (a.load !== b.load) return a.load < b.load;
  return a.workerId < b.workerId;
}
