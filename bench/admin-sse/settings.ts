import { positiveInteger, positiveNumber } from "../shared/env.ts";

export interface AdminSseSettings {
  /** Console sessions, each following /api/events through the one Admin process. */
  sessions: number;
  /** Jobs submitted while they follow, each announcing one job.created event. */
  events: number;
  eventsPerSecond: number;
  /** Sessions read in the second round (all are written to): spread over the Admin's order. */
  sampledReaders: number;
  /** Jobs stored before the jobs view's page loads are timed. */
  storedJobs: number;
  /** Page loads of the jobs view in Chromium, after one unmeasured. */
  pageLoads: number;
}

export function readAdminSseSettings(env: NodeJS.ProcessEnv): AdminSseSettings {
  return {
    sessions: positiveInteger(env, "BENCH_ADMIN_SSE_SESSIONS", "1000"),
    events: positiveInteger(env, "BENCH_ADMIN_SSE_EVENTS", "20"),
    eventsPerSecond: positiveNumber(env, "BENCH_ADMIN_SSE_EVENTS_PER_SECOND", "5"),
    sampledReaders: positiveInteger(env, "BENCH_ADMIN_SSE_SAMPLED_READERS", "50"),
    storedJobs: positiveInteger(env, "BENCH_ADMIN_SSE_STORED_JOBS", "10000"),
    pageLoads: positiveInteger(env, "BENCH_ADMIN_SSE_PAGE_LOADS", "5"),
  };
}
