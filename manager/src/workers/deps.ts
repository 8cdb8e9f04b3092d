import type { Logger } from "@tjm/platform";
import type { Broker } from "../platform/broker.ts";
import type { Sql } from "../platform/db.ts";
import type { CredentialIssuer } from "./credentials.ts";
import type { WorkerMonitor } from "./monitor.ts";
import type { WorkerLifecycleHooks } from "./store.ts";
import type { WorkerStatistic } from "./view.ts";

export interface WorkersDeps {
  sql: Sql;
  broker: Broker;
  logger: Logger;
  subjectPrefix: string;
  /** The NATS URL handed to Workers. */
  natsUrl: string;
  /** undefined when NATS runs without authentication (NATS_AUTH=none). */
  credentials: CredentialIssuer | undefined;
  hashToken: (token: string) => Promise<Uint8Array>;
  heartbeatIntervalMs: number;
  monitor: WorkerMonitor;
  hooks: WorkerLifecycleHooks;
  /** Live statistics of the attempts a Worker runs (from its progress updates). */
  statistics: (workerId: string) => WorkerStatistic[];
}
