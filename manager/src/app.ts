import type { Logger } from "@tjm/platform";
import { type AccountDeps, accountApp } from "./account/index.ts";
import { type AuthenticationDeps, authenticationApp } from "./authentication/index.ts";
import { registerDocs } from "./docs/index.ts";
import { createTokenHasher, enrollmentApp } from "./enrollment/index.ts";
import { type EventHub, eventsApp } from "./events/index.ts";
import { healthApp } from "./health/index.ts";
import { tjmResources } from "./identity/resources.ts";
import { provideAuthenticator } from "./identity/tokens/audiences.ts";
import { tokenStanding, tokenStandings } from "./identity/tokens/standing.ts";
import { createTokenAuth, type IssuerOptions } from "./identity/tokens/verify.ts";
import { type JobsDeps, jobsApp, tenantJobsApp } from "./jobs/index.ts";
import type { LiveProgress } from "./jobs/view.ts";
import { type ManagementDeps, managementApp } from "./management/index.ts";
import { type ManagerMetrics, registerMetrics } from "./metrics/index.ts";
import type { Broker } from "./platform/broker.ts";
import type { Sql } from "./platform/db.ts";
import { createErrorHandler, routeNotFound } from "./platform/errors.ts";
import { closeWhenBodyUnread, createRouter, limitBody, nonPageHeaders, requestId } from "./platform/http.ts";
import { projectsOperationsApp } from "./projects/index.ts";
import { type WorkersDeps, workerApp, workersOperationsApp } from "./workers/index.ts";

export interface AppDeps {
  sql: Sql;
  broker: Broker;
  logger: Logger;
  auth: {
    /** TJM's issuer (OIDC_ISSUER_URL). */
    tjm: IssuerOptions;
    /** An external operator issuer (OIDC_OPERATOR_ISSUER_URL), operations audience only. */
    externalOperator?: IssuerOptions | undefined;
    /** OIDC_OPERATIONS_ADMIN_AUDIENCE. */
    operationsAudience: string;
    /** OPERATOR_REQUIRE_MFA: operator tokens need a second factor in their amr. */
    operatorRequiresMfa?: boolean;
  };
  maxBodyBytes: number;
  liveProgress: LiveProgress;
  /** Scalar's standalone bundle, read by the entrypoint from the installed package. */
  scalarBundle: () => Promise<Uint8Array>;
  /** Feeds the SSE stream with the events the relay published. */
  events: EventHub;
  /** Key of the HMAC that enrollment tokens are stored under. */
  enrollmentTokenSecret: string;
  /**
   * Told after a request committed a change (and so outbox rows): wakes the relay, and the
   * scheduler unless it already ran after the change (`scheduled`).
   */
  outboxWritten: (write: { scheduled: boolean }) => void;
  workers: Pick<
    WorkersDeps,
    "subjectPrefix" | "natsUrl" | "credentials" | "heartbeatIntervalMs" | "monitor" | "hooks" | "statistics"
  >;
  jobs: Pick<JobsDeps, "jobDeadlineHours" | "applyOperatorRequest" | "storeJob" | "readLogTail">;
  account: Omit<AccountDeps, "sql" | "logger">;
  /** The public recovery routes (/api/v1/authentication/recovery/…). */
  authentication: AuthenticationDeps;
  /** Client management: the secret key (CLIENT_SECRET_HMAC_KEY). */
  management: Pick<ManagementDeps, "clientSecretKey">;
  /** How often open SSE streams re-check their tokens' standing (SSE_STANDING_CHECK_MS); 2 s by default. */
  sseStandingCheckMs?: number | undefined;
  /** Audience a tenant token must carry (OIDC_TENANT_AUDIENCE). */
  tenantAudience: string;
  /** The Manager's instruments; none (the OpenAPI emitter): no /metrics, nothing timed. */
  metrics?: ManagerMetrics | undefined;
}

/** Builds the whole HTTP surface from its dependencies; connects to nothing by itself. */
export function createApp(deps: AppDeps) {
  const app = createRouter();
  const hashToken = createTokenHasher(deps.enrollmentTokenSecret);
  app.onError(createErrorHandler(deps.logger));
  app.notFound(routeNotFound);
  app.use("*", requestId);
  app.use("*", nonPageHeaders);
  app.use("*", closeWhenBodyUnread);
  app.use("*", limitBody(deps.maxBodyBytes));
  registerMetrics(app, deps.metrics);
  const tokenAuth = createTokenAuth({
    tjm: deps.auth.tjm,
    externalOperator: deps.auth.externalOperator,
    logger: deps.logger,
    standing: (claims, resource) => tokenStanding(deps.sql, claims, resource),
    operatorRequiresMfa: deps.auth.operatorRequiresMfa,
  });
  app.use(
    "*",
    provideAuthenticator(
      tokenAuth.audiences({ operations: deps.auth.operationsAudience, tenant: deps.tenantAudience }),
    ),
  );
  // The path guards answer 401 for any path under these prefixes, a route or not; each route's
  // own check (its audience's factory) then finds the principal already set.
  app.use("/api/v1/operations/*", tokenAuth.operator(deps.auth.operationsAudience));
  app.use("/api/v1/projects/*", tokenAuth.tenant(deps.tenantAudience));
  app.use("/api/v1/*", async (c, next) => {
    await next();
    // Every successful write commits its announcements; publish them now, not at the next poll.
    if (c.req.method !== "GET" && c.res.status < 300)
      deps.outboxWritten({ scheduled: c.get("scheduled") === true });
  });

  app.route("/api/health", healthApp({ sql: deps.sql, broker: deps.broker }));
  const jobs: JobsDeps = {
    ...deps.jobs,
    sql: deps.sql,
    logger: deps.logger,
    liveProgress: deps.liveProgress,
  };
  app.route("/api/v1/operations", jobsApp(jobs));
  app.route("/api/v1/projects", tenantJobsApp(jobs));
  app.route("/api/v1/operations", enrollmentApp({ sql: deps.sql, hashToken }));
  app.route("/api/v1/operations", projectsOperationsApp({ sql: deps.sql }));
  app.route(
    "/api/v1/operations",
    eventsApp({
      hub: deps.events,
      standingCheckMs: deps.sseStandingCheckMs,
      tjmIssuer: deps.auth.tjm.issuer,
      standings: (questions) => tokenStandings(deps.sql, questions),
      verifyOperationsToken: (token) => tokenAuth.verify(token, "operations", deps.auth.operationsAudience),
      logger: deps.logger,
    }),
  );
  const workers: WorkersDeps = {
    ...deps.workers,
    sql: deps.sql,
    broker: deps.broker,
    logger: deps.logger,
    hashToken,
  };
  app.route("/api/v1/operations", workersOperationsApp(workers));
  app.route("/api/v1/worker", workerApp(workers));
  app.route("/api/v1", accountApp({ ...deps.account, sql: deps.sql, logger: deps.logger }));
  app.route("/api/v1", authenticationApp(deps.authentication));
  const audiences = tjmResources({ operations: deps.auth.operationsAudience, tenant: deps.tenantAudience });
  app.route(
    "/api/v1",
    managementApp({
      sql: deps.sql,
      logger: deps.logger,
      clientSecretKey: deps.management.clientSecretKey,
      resources: new Set(audiences.map((resource) => resource.audience)),
      reauthenticationMaxAgeSeconds: deps.account.reauthenticationMaxAgeSeconds,
      logoutsQueued: deps.account.logoutsQueued,
    }),
  );
  registerDocs(app, deps.scalarBundle);
  return app;
}

export type App = ReturnType<typeof createApp>;
