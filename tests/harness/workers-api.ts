/** The operator's view of a Worker, polled until it shows what a test waits for. */
import type { TestManager } from "./manager.ts";

export interface WorkerView {
  workerId: string;
  instanceId: string;
  name: string;
  pool: string;
  connectivity: "ONLINE" | "SUSPECTED" | "OFFLINE";
  certification: { status: string; reasons: string[] };
  conditions: { type: string; since: string }[];
  capacity: number;
  profile: { hostCapacity: number; capacityCap: number | null };
  capabilities: string[];
  lastHeartbeatAt: string | null;
  freeCapacity: number | null;
  activeAttempts: unknown[] | null;
  registeredAt: string;
}

export async function getWorker(manager: TestManager, workerId: string): Promise<WorkerView> {
  const response = await manager.request(`/api/v1/operations/workers/${workerId}`);
  if (response.status !== 200) throw new Error(`GET worker: ${response.status} ${await response.text()}`);
  return (await response.json()) as WorkerView;
}

export async function waitForWorker(
  manager: TestManager,
  workerId: string,
  check: (worker: WorkerView) => boolean,
  timeoutMs = 10_000,
): Promise<WorkerView> {
  const deadline = Date.now() + timeoutMs;
  let last: WorkerView | undefined;
  while (Date.now() < deadline) {
    last = await getWorker(manager, workerId).catch(() => undefined);
    if (last && check(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `Worker ${workerId} did not get there within ${timeoutMs} ms; last seen: ${JSON.stringify(last)}`,
  );
}

export const isOnline = (worker: WorkerView) =>
  worker.connectivity === "ONLINE" && worker.lastHeartbeatAt !== null;
