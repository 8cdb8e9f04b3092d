/**
 * One Manager: the HTTP app and the background work that goes with it (outbox relay, event
 * hub, heartbeat monitor, the Workers' command consumers, job count compaction). The
 * entrypoints and the test harness both build it here, so what is tested is what runs.
 */

import type { S3Client } from "@aws-sdk/client-s3";
import type { Logger } from "@tjm/platform";
import type { OutputCommit, StorageSettings } from "@tjm/protocol";
import { createS3Client } from "@tjm/storage";
import type { AccountDeps } from "./account/deps.ts";
import { type App, type AppDeps, createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { EventHub } from "./events/index.ts";
import { createExecution, type Execution } from "./execution/index.ts";
import { type AvatarStorage, startAvatarUploadSweep } from "./identity/accounts/index.ts";
import type { SignInLimitSettings } from "./identity/accounts/sign-in-limits.ts";
import { readCommonPasswords } from "./identity/common-passwords.ts";
import { createDelivery, type Delivery, type DeliverySettings } from "./identity/delivery/index.ts";
import { factorSettingsFromConfig } from "./identity/factors/settings.ts";
import { oneTimeCodeKey } from "./identity/one-time-codes.ts";
import { createRecovery, type Recovery, type RecoverySettings } from "./identity/recovery/index.ts";
import { BackchannelLogoutSender, type LogoutClients } from "./identity/sessions/index.ts";
import { startJobCountCompaction } from "./jobs/count-compaction.ts";
import { createManagerMetrics, type ManagerMetrics, type MetricsSettings } from "./metrics/index.ts";
import { createOutboxRelay } from "./outbox/index.ts";
import type { Broker } from "./platform/broker.ts";
import type { Sql } from "./platform/db.ts";
import { type InstallationConflictError, InstallationPresence } from "./presence/presence.ts";
import {
  CommandConsumerKeeper,
  type CredentialIssuer,
  createCredentialIssuer,
  WorkerMonitor,
} from "./workers/index.ts";

/** How often avatar uploads an hour old are looked for: an unclaimed one lives at most this much longer. */
const AVATAR_SWEEP_INTERVAL_MS = 5 * 60 * 1000;

export interface ManagerOptions
  extends Pick<
    AppDeps,
    "auth" | "maxBodyBytes" | "scalarBundle" | "enrollmentTokenSecret" | "sseStandingCheckMs"
  > {
  /** Interval of the SSE keep-alive comment; 15 s unless a test shortens it. */
  sseKeepAliveMs?: number | undefined;
  sql: Sql;
  broker: Broker;
  logger: Logger;
  schema: string;
  subjectPrefix: string;
  tenantAudience: string;
  workers: {
    natsUrl: string;
    credentials: CredentialIssuer | undefined;
    heartbeatIntervalMs: number;
    lostAfterMs: number;
  };
  execution: {
    storage: StorageSettings;
    /** How outputs are committed (S3_COMMIT), named in every lease. */
    commit: OutputCommit;
    dispatchTimeoutMs: number;
    maxAttempts: number;
    jobDeadlineHours: number;
  };
  metrics: MetricsSettings;
  /** E-mail and SMS transports and how the message sender retries. */
  delivery: DeliverySettings;
  /**
   * The built-in provider's clients, when this process serves it (Node): the Manager then sends
   * the back-channel logouts that ending sessions queued. Without it (Deno, or PROVIDER_ENABLED
   * false) the rows wait for a Manager that serves the provider.
   */
  logoutClients?: LogoutClients;
  backchannelLogout: { maxAttempts: number; retryBaseMs: number };
  /** REAUTHENTICATION_MAX_AGE_SECONDS. */
  reauthenticationMaxAgeSeconds: number;
  /** SIGN_IN_ACCOUNT_FAILURE_LIMIT and the rest: the account portal's password check counts toward them. */
  signInLimits: SignInLimitSettings;
  /** The key one-time codes are stored under (oneTimeCodeKey). */
  oneTimeCodeKey: Buffer;
  /** Second factors of sign-in: see AccountDeps.mfa. */
  mfa: AccountDeps["mfa"];
  /** CLIENT_SECRET_HMAC_KEY: client management stores new and rotated secrets under it. */
  clientSecretKey: string | undefined;
  /** AVATAR_BUCKET: where avatar uploads are staged and avatars stored, with the storage settings above. */
  avatarBucket: string;
  /** Password recovery's limits and token lifetime. */
  recovery: RecoverySettings;
  /** TRUSTED_PROXY_ADDRESSES: whose X-Forwarded-For names the client address limits count. */
  trustedProxies: readonly string[];
  /**
   * Run the background loops (default true). Only tests that drive the sweeps and monitors
   * by hand turn them off, so that nothing moves unless they call it.
   */
  background?: boolean;
  /** Also told when a request committed outbox rows (tests count these). */
  onOutboxWritten?: () => void;
  /**
   * Told when another installation turns out to be live on the prefix after start (NATS was
   * down then); this Manager no longer touches the prefix. A conflict found at start rejects
   * startManager instead.
   */
  onInstallationConflict?: (conflict: InstallationConflictError) => void;
}

/** What a Manager takes besides its configuration: its connections, and its caller's hooks. */
export type ManagerDeps = Pick<
  ManagerOptions,
  | "sql"
  | "broker"
  | "logger"
  | "scalarBundle"
  | "sseKeepAliveMs"
  | "background"
  | "onOutboxWritten"
  | "onInstallationConflict"
  | "logoutClients"
>;

/**
 * The one mapping from configuration to a Manager's options, used by the entrypoints and by
 * the test harness: a new setting is added to config.ts and here, nowhere else.
 */
export function managerOptionsFromConfig(config: Config, deps: ManagerDeps): ManagerOptions {
  return {
    ...deps,
    schema: config.DATABASE_SCHEMA,
    subjectPrefix: config.NATS_SUBJECT_PREFIX,
    auth: {
      tjm: { issuer: config.OIDC_ISSUER_URL, jwksUrl: config.OIDC_JWKS_URL },
      externalOperator: config.OIDC_OPERATOR_ISSUER_URL
        ? { issuer: config.OIDC_OPERATOR_ISSUER_URL, jwksUrl: config.OIDC_OPERATOR_JWKS_URL }
        : undefined,
      operationsAudience: config.OIDC_OPERATIONS_ADMIN_AUDIENCE,
      operatorRequiresMfa: config.OPERATOR_REQUIRE_MFA,
    },
    maxBodyBytes: config.MAX_BODY_BYTES,
    sseStandingCheckMs: config.SSE_STANDING_CHECK_MS,
    enrollmentTokenSecret: config.ENROLLMENT_TOKEN_SECRET,
    tenantAudience: config.OIDC_TENANT_AUDIENCE,
    workers: {
      // One string on the wire, the servers comma-separated (the registration response's natsUrl).
      natsUrl: (config.NATS_WORKER_URL ?? config.NATS_URL).join(","),
      credentials:
        config.NATS_AUTH === "jwt"
          ? createCredentialIssuer({
              subjectPrefix: config.NATS_SUBJECT_PREFIX,
              accountPublicKey: config.NATS_ACCOUNT_PUBLIC_KEY as string,
              signingKeySeed: config.NATS_ACCOUNT_SIGNING_KEY_SEED as string,
              ttlSeconds: config.WORKER_JWT_TTL_SECONDS,
            })
          : undefined,
      heartbeatIntervalMs: config.HEARTBEAT_INTERVAL_MS,
      lostAfterMs: config.WORKER_LOST_AFTER_MS,
    },
    execution: {
      storage: {
        endpoint: config.S3_ENDPOINT,
        region: config.S3_REGION,
        accessKeyId: config.S3_ACCESS_KEY_ID,
        secretAccessKey: config.S3_SECRET_ACCESS_KEY,
        forcePathStyle: config.S3_FORCE_PATH_STYLE,
        checksums: config.S3_CHECKSUMS,
        maxParts: config.S3_MAX_PARTS,
      },
      commit: config.S3_COMMIT,
      dispatchTimeoutMs: config.DISPATCH_TIMEOUT_MS,
      maxAttempts: config.MAX_ATTEMPTS,
      jobDeadlineHours: config.JOB_DEADLINE_HOURS,
    },
    backchannelLogout: {
      maxAttempts: config.BACKCHANNEL_LOGOUT_MAX_ATTEMPTS,
      retryBaseMs: config.BACKCHANNEL_LOGOUT_RETRY_BASE_MS,
    },
    metrics: {
      enabled: config.METRICS_ENABLED,
      ownPort: config.METRICS_PORT !== undefined,
      bearerToken: config.METRICS_BEARER_TOKEN,
    },
    delivery: deliverySettingsFromConfig(config),
    reauthenticationMaxAgeSeconds: config.REAUTHENTICATION_MAX_AGE_SECONDS,
    signInLimits: {
      accountLimit: config.SIGN_IN_ACCOUNT_FAILURE_LIMIT,
      addressLimit: config.SIGN_IN_ADDRESS_FAILURE_LIMIT,
      windowSeconds: config.SIGN_IN_FAILURE_WINDOW_SECONDS,
    },
    oneTimeCodeKey: oneTimeCodeKey(config.ONE_TIME_CODE_HMAC_KEY ?? config.ENROLLMENT_TOKEN_SECRET),
    mfa: factorSettingsFromConfig(config),
    clientSecretKey: config.CLIENT_SECRET_HMAC_KEY,
    avatarBucket: config.AVATAR_BUCKET,
    recovery: {
      limits: {
        requestsPerIdentifier: config.RECOVERY_REQUEST_IDENTIFIER_LIMIT,
        requestsPerAddress: config.RECOVERY_REQUEST_ADDRESS_LIMIT,
        codesPerIdentifier: config.RECOVERY_CODE_IDENTIFIER_LIMIT,
        codesPerAddress: config.RECOVERY_CODE_ADDRESS_LIMIT,
        messagesPerDestination: config.RECOVERY_DESTINATION_MESSAGE_LIMIT,
        resetsPerAddress: config.RECOVERY_RESET_ADDRESS_LIMIT,
        windowSeconds: config.RECOVERY_LIMIT_WINDOW_SECONDS,
      },
      tokenTtlSeconds: config.RECOVERY_TOKEN_TTL_SECONDS,
      pollMs: config.MESSAGE_POLL_MS,
    },
    trustedProxies: config.TRUSTED_PROXY_ADDRESSES,
  };
}

function deliverySettingsFromConfig(config: Config): DeliverySettings {
  const timeoutMs = config.MESSAGE_SEND_TIMEOUT_MS;
  return {
    email:
      config.EMAIL_TRANSPORT === "smtp"
        ? {
            kind: "smtp",
            host: config.SMTP_HOST as string,
            port: config.SMTP_PORT,
            tls: config.SMTP_TLS,
            username: config.SMTP_USERNAME,
            password: config.SMTP_PASSWORD,
            fromAddress: config.EMAIL_FROM as string,
            fromName: config.MESSAGE_SERVICE_NAME,
            timeoutMs,
          }
        : { kind: config.EMAIL_TRANSPORT },
    sms:
      config.SMS_TRANSPORT === "webhook"
        ? {
            kind: "webhook",
            url: config.SMS_WEBHOOK_URL as string,
            secret: config.SMS_WEBHOOK_SECRET as string,
            timeoutMs,
          }
        : { kind: config.SMS_TRANSPORT },
    serviceName: config.MESSAGE_SERVICE_NAME,
    retry: {
      maxAttempts: config.MESSAGE_MAX_ATTEMPTS,
      baseDelayMs: config.MESSAGE_RETRY_BASE_MS,
      maxDelayMs: config.MESSAGE_RETRY_MAX_MS,
    },
    sendTimeoutMs: timeoutMs,
    pollMs: config.MESSAGE_POLL_MS,
  };
}

export interface Manager {
  app: App;
  monitor: WorkerMonitor;
  commandConsumers: CommandConsumerKeeper;
  events: EventHub;
  execution: Execution;
  presence: InstallationPresence;
  /** Its instruments; the entrypoint serves them on METRICS_PORT when that is set. */
  metrics: ManagerMetrics;
  /** Messages people receive: features enqueue them in their transactions, its sender sends them. */
  delivery: Delivery;
  /** Password recovery's three steps (the provider's recovery pages call them too). */
  recovery: Recovery;
  /** Sends queued back-channel logouts; wake it after ending sessions. Absent without the provider. */
  backchannelLogouts: BackchannelLogoutSender | undefined;
  /** Stops the background work; the caller stops serving first and closes sql and broker after. */
  stop(): Promise<void>;
}

/**
 * How long start waits for NATS to say whether another installation is live on the prefix;
 * a Manager whose NATS is down starts anyway and checks once it connects.
 */
const PRESENCE_START_WAIT_MS = 2000;

export async function startManager(options: ManagerOptions): Promise<Manager> {
  const { sql, logger, subjectPrefix } = options;
  let started = false;
  const presence = new InstallationPresence({
    broker: options.broker,
    sql,
    subjectPrefix,
    logger,
    onConflict: (conflict) => {
      if (started) options.onInstallationConflict?.(conflict);
    },
  });
  presence.start();
  await presence.settled(PRESENCE_START_WAIT_MS);
  if (presence.conflict) {
    await presence.stop();
    throw presence.conflict;
  }
  started = true;
  // Until this Manager holds the prefix, it publishes and consumes nothing on it.
  const broker = presence.guardedBroker();
  const events = new EventHub(broker, subjectPrefix, logger, options.sseKeepAliveMs);
  const metrics = createManagerMetrics(options.metrics, {
    sql,
    broker: options.broker,
    sseSubscribers: () => events.subscribers,
    logger,
  });
  const relay = createOutboxRelay({
    sql,
    schema: options.schema,
    subjectPrefix,
    broker,
    logger,
    published: metrics.outboxPublished,
  });
  const outboxWritten = () => {
    options.onOutboxWritten?.();
    relay.wake();
  };
  const execution = createExecution({
    sql,
    broker,
    logger,
    schema: options.schema,
    subjectPrefix,
    events,
    storage: options.execution.storage,
    commit: options.execution.commit,
    dispatchTimeoutMs: options.execution.dispatchTimeoutMs,
    maxAttempts: options.execution.maxAttempts,
    metrics,
    outboxWritten,
    leasesCommitted: (publishNow, leftToRelay) => {
      options.onOutboxWritten?.();
      void relay.publishCommitted(publishNow);
      if (leftToRelay > 0) relay.wake(true);
    },
  });
  const monitor = new WorkerMonitor({
    sql,
    broker,
    logger,
    subjectPrefix,
    hooks: execution.hooks,
    heartbeatIntervalMs: options.workers.heartbeatIntervalMs,
    lostAfterMs: options.workers.lostAfterMs,
    // A Worker back ONLINE (or heartbeating with room) may take queued jobs; an OFFLINE one freed its jobs.
    changed: () => {
      outboxWritten();
      execution.dispatcher.wake();
    },
  });
  const commandConsumers = new CommandConsumerKeeper({ sql, broker, subjectPrefix, logger });
  const delivery = createDelivery(options.delivery, { sql, logger, outcome: metrics.messageOutcome });
  const backchannelLogouts =
    options.logoutClients &&
    new BackchannelLogoutSender({
      sql,
      clients: options.logoutClients,
      logger,
      maxAttempts: options.backchannelLogout.maxAttempts,
      retryBaseMs: options.backchannelLogout.retryBaseMs,
      outcome: metrics.backchannelLogout,
    });
  const recovery = createRecovery(options.recovery, {
    sql,
    logger,
    delivery,
    oneTimeCodeKey: options.oneTimeCodeKey,
    commonPasswords: await readCommonPasswords(),
    logoutsQueued: () => backchannelLogouts?.wake(),
  });
  const background = options.background !== false;
  let avatarClient: S3Client | undefined;
  const avatars: AvatarStorage = {
    client: () => {
      avatarClient ??= createS3Client(options.execution.storage);
      return avatarClient;
    },
    bucket: options.avatarBucket,
  };
  let stopCompaction = async () => {};
  let stopAvatarSweep = async () => {};
  if (background) {
    await relay.start();
    events.start();
    monitor.start();
    commandConsumers.start();
    execution.start();
    backchannelLogouts?.start();
    stopCompaction = startJobCountCompaction(sql, logger);
    stopAvatarSweep = startAvatarUploadSweep(sql, avatars, logger, AVATAR_SWEEP_INTERVAL_MS);
    delivery.start();
    recovery.start();
  }
  const app = createApp({
    sql,
    broker,
    logger,
    auth: options.auth,
    maxBodyBytes: options.maxBodyBytes,
    liveProgress: (attemptId) => execution.progress.percent(attemptId),
    scalarBundle: options.scalarBundle,
    events,
    enrollmentTokenSecret: options.enrollmentTokenSecret,
    outboxWritten: ({ scheduled }) => {
      outboxWritten();
      // Every successful write may have queued a job or freed a Worker, unless the scheduler
      // already ran after it.
      if (!scheduled) execution.dispatcher.wake();
    },
    tenantAudience: options.tenantAudience,
    sseStandingCheckMs: options.sseStandingCheckMs,
    metrics,
    workers: {
      subjectPrefix,
      natsUrl: options.workers.natsUrl,
      credentials: options.workers.credentials,
      heartbeatIntervalMs: options.workers.heartbeatIntervalMs,
      monitor,
      hooks: execution.hooks,
      statistics: (workerId) => execution.progress.statisticsOf(workerId),
    },
    jobs: {
      jobDeadlineHours: options.execution.jobDeadlineHours,
      applyOperatorRequest: execution.applyOperatorRequest,
      storeJob: (insert) => execution.dispatcher.insertAndSchedule(insert),
      readLogTail: execution.readLogTail,
    },
    account: {
      delivery,
      reauthenticationMaxAgeSeconds: options.reauthenticationMaxAgeSeconds,
      oneTimeCodeKey: options.oneTimeCodeKey,
      mfa: options.mfa,
      logoutsQueued: () => backchannelLogouts?.wake(),
      avatars,
      signInLimits: options.signInLimits,
      clientSecretKey: options.clientSecretKey,
    },
    authentication: { recovery, trustedProxies: options.trustedProxies },
    management: { clientSecretKey: options.clientSecretKey },
  });
  return {
    app,
    monitor,
    commandConsumers,
    events,
    execution,
    presence,
    metrics,
    delivery,
    recovery,
    backchannelLogouts,
    async stop() {
      try {
        await recovery.stop();
        await delivery.stop();
        await backchannelLogouts?.stop();
        await execution.stop();
        await monitor.stop();
        await commandConsumers.stop();
        await relay.stop();
        await events.stop();
        await stopCompaction();
        await stopAvatarSweep();
      } finally {
        // Last: another installation may take the prefix as soon as this record is gone.
        await presence.stop();
      }
    },
  };
}
