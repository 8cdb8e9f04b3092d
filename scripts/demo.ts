/**
 * `npm run demo`: the whole system on one machine, end to end. Finds (or starts) PostgreSQL
 * and NATS, starts an S3-compatible server (s3rver, in this process), the Manager with its
 * built-in OpenID provider, the Admin console and one Worker agent, makes a demo operator, an
 * operations client and the console's client with the Manager's CLI and signs the operator in
 * through the provider (headless), generates a test clip with ffmpeg, uploads it, submits a job
 * with two outputs and a removed segment, shows its progress live, then prints where the outputs
 * are, what ffprobe says of them and the manifest, and where to sign in to the console. Serves
 * until Ctrl-C; `npm run demo -- --once` exits after printing. Everything it started is stopped,
 * and its temp files removed, on exit and on failure.
 */
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { AgentProcess } from "@tjm/devstack/agent-process";
import { type ManagerProcess, REPOSITORY_ROOT, startManagerProcess } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { S3RVER_CREDENTIALS, type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { canConnect, findOrStartServices, freePort, type Services } from "@tjm/devstack/services";
import { createTjmClient, type TjmClient } from "@tjm/sdk";
import {
  loadMigrations as loadConsoleMigrations,
  migrate as migrateConsole,
} from "../admin/src/platform/migrations.ts";
import { createSql } from "../manager/src/platform/db.ts";
import { loadMigrations, migrate } from "../manager/src/platform/migrations.ts";
import { createProject } from "../manager/src/projects/store.ts";
import { type AdminConsole, chooseConsoleUrl, startAdminConsole } from "./demo-admin.ts";
import {
  type ConsoleClient,
  type DemoDatabase,
  type DemoState,
  loadDemoState,
  makeConsoleClient,
  makeOperator,
  OPERATIONS_REDIRECT_URI,
  OPERATIONS_RESOURCE,
  OPERATOR_EMAIL,
  OPERATOR_SCOPE,
  OperatorSession,
  registeredConsoleOrigin,
  statePath,
  tokenPath,
} from "./demo-identity.ts";

const run = promisify(execFile);
// The AWS SDK's notice that its releases after January 2027 need Node 22 is not the demo's news.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const once = process.argv.includes("--once");
const schema = process.env.DEMO_SCHEMA ?? "tjm_demo";
const say = (line = "") => console.log(line);

/** The test clip: 20 s of testsrc2 with a 440 Hz tone. */
const CLIP = { seconds: 20, width: 640, height: 360, fps: 25 };
/** Keys of this run: a job an earlier run left behind cannot find this run's input or outputs. */
const RUN = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
const INPUT_URI = `s3://media-in/demo/${RUN}/clip.mp4`;
/** An output of this run's job, stored as <id>.<container> under the run's key. */
function output(id: string, container: string, video: object, audio: object) {
  const destinationUri = `s3://media-out/demo/${RUN}/${id}.${container}`;
  return { id, kind: "FILE", container, destinationUri, video, audio };
}
/** Two outputs from one ffmpeg run, with 5–8 s cut out: both last 17 s. */
const PLAN = {
  input: { uri: INPUT_URI },
  outputs: [
    output(
      "360p",
      "mp4",
      { codec: "h264", height: 360, preset: "fastest" },
      { codec: "aac", bitrateKbps: 128 },
    ),
    output(
      "240p",
      "webm",
      { codec: "vp9", height: 240, preset: "fastest" },
      { codec: "opus", bitrateKbps: 96 },
    ),
  ],
  transforms: { removedSegments: [{ startMs: 5000, endMs: 8000 }] },
  manifestUri: `s3://media-out/demo/${RUN}/manifest.json`,
} as const;
const JOB_TIMEOUT_MS = 5 * 60_000;

/** A fresh key per demo run: enrollment tokens issued by an earlier run simply stop matching. */
const ENROLLMENT_TOKEN_SECRET = randomBytes(32).toString("hex");
const TERMINAL_STATES = ["COMPLETED", "FAILED", "CANCELLED"];

// ---- steps, clean-up and Ctrl-C --------------------------------------------------------------

/** What has to be undone, newest first at exit. */
const cleanups: { what: string; undo: () => Promise<unknown> }[] = [];
const interrupted = new AbortController();

class StepFailed extends Error {
  constructor(
    readonly step: string,
    readonly reason: unknown,
  ) {
    super(`${step}: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}

/** Runs one named step; a failure names the step. */
async function step<T>(name: string, body: () => Promise<T>): Promise<T> {
  interrupted.signal.throwIfAborted();
  try {
    return await body();
  } catch (err) {
    throw err instanceof StepFailed || interrupted.signal.aborted ? err : new StepFailed(name, err);
  }
}

function onCleanup(what: string, undo: () => Promise<unknown>): void {
  cleanups.push({ what, undo });
}

async function cleanUp(): Promise<void> {
  const steps = cleanups.splice(0).reverse();
  if (steps.length === 0) return;
  say(`\nCleaning up: ${steps.map((c) => c.what).join(", ")}.`);
  for (const { what, undo } of steps) {
    await undo().catch((err: Error) => say(`  could not stop ${what}: ${err.message}`));
  }
  say("Done.");
}

/**
 * On Ctrl-C npm passes the terminal's SIGINT on to its script as well: a repeat this soon after
 * the first is the same keypress, not a second one. A signal sent to npm alone (`kill <pid>`)
 * reaches the demo too because the npm script `exec`s node: without it the shell between them
 * died of the signal and left the demo running. The script runs node with tsx's loader, not
 * tsx's CLI, which SIGKILLs a child that has not answered a signal within 60 ms (a busy
 * machine's may not), clean-up or not.
 */
const SIGNAL_ECHO_MS = 1000;
/** How often a serving demo checks whether the operator's token is due for its refresh. */
const TOKEN_RENEWAL_CHECK_MS = 15_000;
let firstSignalAt = 0;

function onSignal(signal: NodeJS.Signals): void {
  if (interrupted.signal.aborted) {
    if (Date.now() - firstSignalAt < SIGNAL_ECHO_MS) return;
    say(`\n${signal} again: exiting without finishing the clean-up.`);
    process.exit(130);
  }
  firstSignalAt = Date.now();
  interrupted.abort(new Error(`interrupted by ${signal}`));
}

/** Resolves after `ms`, or rejects at once on Ctrl-C. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      reject(interrupted.signal.reason);
    };
    const timer = setTimeout(() => {
      interrupted.signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    interrupted.signal.addEventListener("abort", stop, { once: true });
  });
}

/** `promise`, or a rejection saying what did not happen within `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

// ---- the demo ---------------------------------------------------------------------------------

async function demo(): Promise<void> {
  const services = await step("find or start PostgreSQL and NATS", findServices);
  const database: DemoDatabase = { url: services.databaseUrl, schema };
  await step("migrate the demo schema", () => migrateSchema(services));
  const state = await step("load or create the demo's keys", () => loadDemoState(database));
  const scratch = await step("create a temp directory", makeScratch);
  const s3 = await step("start the S3-compatible server (s3rver)", startStorage);
  const port = await step("pick the Manager's port", choosePort);
  const env = managerEnvironment(services, s3, state, port);
  const clientId = await step("create the demo operator and its operations client", () =>
    makeOperator(database, env, state),
  );
  const consoleUrl = await step("pick the Admin console's port", async () =>
    chooseConsoleUrl(await registeredConsoleOrigin(database, state)),
  );
  const consoleClient = await step("create the Admin console's client", () =>
    makeConsoleClient(database, env, state, consoleUrl),
  );
  const manager = await step("start the Manager", () => startManager(env, port));
  const operator = await step("sign the operator in through the OpenID provider", async () => {
    const session = await OperatorSession.signIn(
      env.OIDC_ISSUER_URL,
      clientId,
      state.DEMO_OPERATOR_PASSWORD,
      tokenPath(schema),
    );
    onCleanup("the operator's token file", () => session.end());
    return session;
  });
  const adminConsole = await step("start the Admin console", () =>
    startConsole(consoleUrl, manager, env, consoleClient, state),
  );
  const client = createTjmClient({ baseUrl: manager.baseUrl, token: () => operator.accessToken() });
  const projectId = await step("create a project", () => makeProject(services));
  await step("tidy up after earlier demo runs", () => retireLeftovers(client));
  const agent = await step("start a Worker agent", () => startWorker(client, manager, scratch));
  const clip = await step("generate a test clip with ffmpeg", () => generateClip(scratch));
  await step(`upload the clip to ${INPUT_URI}`, () => upload(s3, clip));
  const events = await step("subscribe to the event stream", async () =>
    subscribe(manager, await operator.accessToken()),
  );
  const jobId = await step("submit the job", () => submit(client, projectId));
  await step("run the job", () => watch(client, jobId, events, agent));
  await step("inspect the outputs", () => inspectOutputs(s3, scratch));
  await step("read the manifest", () => printManifest(s3));
  printNextSteps(manager, s3, clientId, consoleClient, operator, jobId);
  printConsoleSignIn(adminConsole, state);

  if (once) return;
  operator.keepRenewing(TOKEN_RENEWAL_CHECK_MS, (error) =>
    say(`  could not renew the operator's token: ${error.message}`),
  );
  say(
    `\nServing until Ctrl-C; it stops the Worker, the Admin console, the Manager and s3rver and removes the temp files.`,
  );
  await new Promise<void>((resolve) => interrupted.signal.addEventListener("abort", () => resolve()));
}

async function findServices(): Promise<Services> {
  const services = await findOrStartServices((line) => say(`• ${line}`));
  const names: Record<string, string> = { postgres: "embedded PostgreSQL", nats: "nats-server" };
  const started = services.started.map((name) => names[name] ?? name).join(" and ");
  if (started) onCleanup(started, () => services.stop());
  return services;
}

/** The Manager's tables and the Admin console's, side by side in the demo schema. */
async function migrateSchema(services: Services): Promise<void> {
  const sql = createSql({ url: services.databaseUrl, schema, poolMax: 2, applicationName: "tjm-demo" });
  const describe = (applied: { name: string }[]) =>
    applied.length ? `applied ${applied.map((m) => m.name).join(", ")}` : "up to date";
  try {
    const managerApplied = await migrate(sql, schema, await loadMigrations());
    const consoleApplied = await migrateConsole(sql, schema, await loadConsoleMigrations());
    say(
      `• migrations: ${describe(managerApplied)}; the console's: ${describe(consoleApplied)} (schema ${schema})`,
    );
  } finally {
    await sql.end();
  }
}

async function makeScratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "tjm-demo-"));
  onCleanup("temp files", () => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function startStorage(): Promise<S3Server> {
  const s3 = await startS3({ buckets: ["media-in", "media-out"] });
  onCleanup("s3rver", () => s3.stop());
  say(`• S3: s3rver at ${s3.endpoint} (buckets media-in, media-out; data in ${s3.directory})`);
  return s3;
}

/** 8080 (or PORT) when it is free, so the printed URLs are easy to remember. */
async function choosePort(): Promise<number> {
  const wanted = Number(process.env.PORT ?? 8080);
  const taken = wanted === 0 || (await canConnect(`http://127.0.0.1:${wanted}`));
  return taken ? await freePort() : wanted;
}

type ManagerEnvironment = ReturnType<typeof managerEnvironment>;

/** The Manager's configuration, for `npm run manager` and its CLI alike. */
function managerEnvironment(services: Services, s3: S3Server, state: DemoState, port: number) {
  return {
    DATABASE_URL: services.databaseUrl,
    DATABASE_SCHEMA: schema,
    NATS_URL: services.natsUrl,
    // The demo's NATS has no accounts; the Manager says so in a warning at start.
    NATS_AUTH: "none",
    PORT: String(port),
    // The built-in provider, at the Manager's own address: the issuer names the port.
    PROVIDER_ENABLED: "true",
    OIDC_ISSUER_URL: `http://127.0.0.1:${port}/oidc`,
    // The provider posts back-channel logouts to the Admin console, on loopback like the rest.
    PROVIDER_PRIVATE_NETWORK_HOSTS: "127.0.0.1,localhost",
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    PROVIDER_KEY_ENCRYPTION_KEY: state.PROVIDER_KEY_ENCRYPTION_KEY,
    CLIENT_SECRET_HMAC_KEY: state.CLIENT_SECRET_HMAC_KEY,
    ENROLLMENT_TOKEN_SECRET,
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.settings.region,
    S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    S3_FORCE_PATH_STYLE: "true",
    S3_CHECKSUMS: "WHEN_REQUIRED",
    LOG_LEVEL: "warn",
  };
}

async function startConsole(
  url: string,
  manager: ManagerProcess,
  env: ManagerEnvironment,
  client: ConsoleClient,
  state: DemoState,
): Promise<AdminConsole> {
  const adminConsole = await startAdminConsole(url, {
    DATABASE_URL: env.DATABASE_URL,
    DATABASE_SCHEMA: env.DATABASE_SCHEMA,
    MANAGER_URL: manager.baseUrl,
    OIDC_ISSUER_URL: env.OIDC_ISSUER_URL,
    OIDC_OPERATIONS_ADMIN_AUDIENCE: env.OIDC_OPERATIONS_ADMIN_AUDIENCE,
    ADMIN_CLIENT_ID: client.clientId,
    ADMIN_CLIENT_SECRET: client.clientSecret,
    ADMIN_SESSION_KEY: state.ADMIN_SESSION_KEY,
  });
  onCleanup("the Admin console", () => adminConsole.stop());
  say(
    `• Admin console at ${adminConsole.url} (pid ${adminConsole.pid}), ready: it answers and asks a browser to sign in`,
  );
  return adminConsole;
}

async function startManager(env: ManagerEnvironment, port: number): Promise<ManagerProcess> {
  const manager = await startManagerProcess("node", env, port);
  onCleanup("the Manager", () => manager.stop());
  say(`• Manager on Node at ${manager.baseUrl}, its OpenID provider at ${env.OIDC_ISSUER_URL}`);
  return manager;
}

// ---- the project and leftovers of earlier runs --------------------------------------------

async function makeProject(services: Services): Promise<string> {
  const sql = createSql({ url: services.databaseUrl, schema, poolMax: 1, applicationName: "tjm-demo" });
  try {
    const { projectId } = await createProject(sql, "demo", `demo-${new Date().toISOString()}`);
    say(`• project ${projectId} (organization "demo"): the job below is submitted to it`);
    return projectId;
  } finally {
    await sql.end();
  }
}

/**
 * A demo schema outlives its runs. A run that could not clean up (killed) leaves its Worker,
 * gone with its identity, looking ONLINE to a Manager just started, and a job interrupted by
 * Ctrl-C stays unfinished. Disable those Workers and cancel those jobs, so this run's job goes
 * to this run's Worker.
 */
async function retireLeftovers(client: TjmClient): Promise<void> {
  const workers = await client.GET("/api/v1/operations/workers", { params: { query: { limit: 100 } } });
  const jobs = await client.GET("/api/v1/operations/jobs", {
    params: { query: { states: ["QUEUED", "RUNNING", "WAITING_FOR_STORAGE"], limit: 100 } },
  });
  if (!workers.data || !jobs.data)
    throw new Error(`cannot list: ${JSON.stringify(workers.error ?? jobs.error)}`);
  const stale = workers.data.items.filter((w) => !w.conditions.some((c) => c.type === "DISABLED"));
  for (const { workerId } of stale) {
    await client.POST("/api/v1/operations/workers/{workerId}/disable", { params: { path: { workerId } } });
  }
  for (const { id } of jobs.data.items) {
    await client.POST("/api/v1/operations/jobs/{jobId}/cancel", { params: { path: { jobId: id } } });
  }
  if (stale.length || jobs.data.items.length) {
    say(
      `• earlier runs left ${stale.length} Worker(s) and ${jobs.data.items.length} unfinished job(s) in schema ${schema}: disabled and cancelled`,
    );
  }
}

/** `npm run worker`, enrolled with a token the demo issues as an operator. */
async function startWorker(
  client: TjmClient,
  manager: ManagerProcess,
  scratch: string,
): Promise<AgentProcess> {
  const issued = await client.POST("/api/v1/operations/enrollment-tokens", { body: { label: "demo" } });
  if (!issued.data) throw new Error(`no enrollment token: ${JSON.stringify(issued.error)}`);
  const child = spawn(join(REPOSITORY_ROOT, "node_modules/.bin/bun"), ["worker-agent/src/main.ts"], {
    cwd: REPOSITORY_ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      MANAGER_URL: manager.baseUrl,
      ENROLLMENT_TOKEN: issued.data.token,
      WORKER_STATE_DIR: join(scratch, "worker-state"),
      WORKER_WORK_DIR: join(scratch, "worker-work"),
      WORKER_NAME: "demo-worker",
    },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: Ctrl-C reaches the demo, which stops the agent in order.
    detached: true,
  });
  const agent = new AgentProcess(child);
  let workerId: string | undefined;
  onCleanup("the Worker agent", async () => {
    await agent.stop("SIGTERM", 15_000);
    // An ffmpeg it ran outlives an agent that had to be killed; the group holds both.
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // nothing left
    }
    // Its identity goes with the temp files: retire it, so no later run leases to it.
    if (workerId) {
      await client.POST("/api/v1/operations/workers/{workerId}/disable", { params: { path: { workerId } } });
    }
  });
  const started = await agent.waitForMessage("worker started", 60_000);
  workerId = String(started.workerId);
  say(
    `• Worker agent on Bun (pid ${child.pid}): worker ${workerId}, pool ${started.pool}, capacity ${started.capacity}`,
  );
  return agent;
}

async function generateClip(scratch: string): Promise<string> {
  const path = join(scratch, "clip.mp4");
  const { seconds, width, height, fps } = CLIP;
  await run("ffmpeg", [
    ...["-hide_banner", "-loglevel", "error", "-y"],
    ...["-f", "lavfi", "-i", `testsrc2=size=${width}x${height}:rate=${fps}:duration=${seconds}`],
    ...["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${seconds}`],
    ...["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path],
  ]);
  say(`• test clip: ${seconds} s, ${width}x${height} at ${fps} fps, H.264 and AAC (ffmpeg testsrc2 + sine)`);
  return path;
}

async function upload(s3: S3Server, path: string): Promise<void> {
  const { bucket, key } = parseUri(INPUT_URI);
  const body = await readFile(path);
  await s3
    .client()
    .send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: "video/mp4" }));
  say(`• uploaded ${INPUT_URI} (${megabytes(body.length)})`);
}

async function submit(client: TjmClient, projectId: string): Promise<string> {
  const submitted = await client.POST("/api/v1/operations/jobs", {
    body: { projectId, executionPlan: PLAN as never },
  });
  if (!submitted.data) throw new Error(`the Manager refused the job: ${JSON.stringify(submitted.error)}`);
  say(`\nSubmitted job ${submitted.data.id} through the SDK with this execution plan:`);
  say(JSON.stringify(PLAN, null, 2));
  say("");
  return submitted.data.id;
}

/** Follows the job until it ends: state changes and a progress bar from SSE, the state polled. */
async function watch(
  client: TjmClient,
  jobId: string,
  events: EventStream,
  agent: AgentProcess,
): Promise<void> {
  const view = new ProgressView();
  const attemptNumbers = new Map<string, number>();
  events.onEvent((kind, data) => {
    if (data.jobId !== jobId) return;
    const attempt = String(data.attemptId ?? "");
    const label = `job ${short(jobId)} attempt ${attemptNumbers.get(attempt) ?? short(attempt)}`;
    if (kind === "job.updated") {
      // A failed attempt says why and, when the job goes on, which attempt comes next.
      const failed = data.failureCode ? `; the attempt failed with ${data.failureCode}` : "";
      if (typeof data.nextAttemptId === "string" && typeof data.nextAttemptNumber === "number")
        attemptNumbers.set(data.nextAttemptId, data.nextAttemptNumber);
      const next = data.nextAttemptNumber ? `, attempt ${data.nextAttemptNumber} queued` : "";
      const paused = data.reason ? ` (${data.reason})` : "";
      view.note(`${label}: ${data.from} -> ${data.to}${paused}${failed}${next}`);
    }
    if (kind === "job.progress") view.update(attempt, label, data);
  });
  const startedAt = Date.now();
  try {
    for (;;) {
      const { data: job } = await client.GET("/api/v1/operations/jobs/{jobId}", {
        params: { path: { jobId } },
      });
      if (!job) throw new Error(`job ${jobId} is gone`);
      for (const attempt of job.attempts) attemptNumbers.set(attempt.id, attempt.attemptNumber);
      if (TERMINAL_STATES.includes(job.state)) {
        view.done();
        const last = job.attempts.at(-1);
        const took = ((Date.now() - startedAt) / 1000).toFixed(1);
        const attempts = job.attempts.length === 1 ? "1 attempt" : `${job.attempts.length} attempts`;
        say(`Job ${jobId} ${job.state} after ${took} s (${attempts}).`);
        if (last?.logsUri) say(`ffmpeg log of the last attempt: ${last.logsUri}`);
        if (job.state !== "COMPLETED") {
          throw new Error(`the job ended ${job.state}: ${last?.failureCode} ${last?.failureMessage ?? ""}`);
        }
        return;
      }
      if (!agent.running) throw new Error(`the Worker agent exited:\n${agent.describe()}`);
      if (Date.now() - startedAt > JOB_TIMEOUT_MS) {
        throw new Error(`the job is still ${job.state} after ${JOB_TIMEOUT_MS / 60_000} min`);
      }
      await sleep(500);
    }
  } finally {
    view.done();
  }
}

interface Probe {
  format: { duration: string };
  streams: {
    codec_type: string;
    codec_name: string;
    width?: number;
    height?: number;
    sample_rate?: string;
    channels?: number;
  }[];
}

/** Downloads every output, runs ffprobe on it and prints what it says. */
async function inspectOutputs(s3: S3Server, scratch: string): Promise<void> {
  say(
    `\nOutputs, in s3rver at ${s3.endpoint} (path-style; access key ${S3RVER_CREDENTIALS.accessKeyId}, secret ${S3RVER_CREDENTIALS.secretAccessKey}):`,
  );
  const dir = join(scratch, "outputs");
  await mkdir(dir, { recursive: true });
  for (const output of PLAN.outputs) {
    const body = await download(s3, output.destinationUri);
    const path = join(dir, output.destinationUri.split("/").at(-1) as string);
    await writeFile(path, body);
    const { stdout } = await run("ffprobe", [
      ...["-v", "error", "-print_format", "json", "-show_format", "-show_streams", path],
    ]);
    say(`  ${output.destinationUri}  (${megabytes(body.length)})`);
    say(`    ffprobe: ${describeProbe(JSON.parse(stdout) as Probe)}`);
  }
  say(`Downloaded copies: ${dir} (removed at exit)`);
}

function describeProbe(probe: Probe): string {
  const parts = [`duration ${Number(probe.format.duration).toFixed(2)} s`];
  for (const stream of probe.streams) {
    if (stream.codec_type === "video")
      parts.push(`video ${stream.codec_name} ${stream.width}x${stream.height}`);
    if (stream.codec_type === "audio") {
      const khz = Number(stream.sample_rate) / 1000;
      parts.push(`audio ${stream.codec_name} ${khz} kHz ${stream.channels} ch`);
    }
  }
  return parts.join(", ");
}

async function printManifest(s3: S3Server): Promise<void> {
  const manifest = JSON.parse((await download(s3, PLAN.manifestUri)).toString());
  say(`\nManifest (${PLAN.manifestUri}):`);
  say(JSON.stringify(manifest, null, 2));
}

function printNextSteps(
  manager: ManagerProcess,
  s3: S3Server,
  clientId: string,
  consoleClient: ConsoleClient,
  operator: OperatorSession,
  jobId: string,
): void {
  const issuer = `${manager.baseUrl}/oidc`;
  say(`\nAPI docs (Scalar):  ${manager.baseUrl}/api/docs`);
  say(`OpenAPI document:   ${manager.baseUrl}/api/v1/openapi.json`);
  say(`OpenID provider: ${issuer}`);
  say(`  discovery:        ${issuer}/.well-known/openid-configuration`);
  say(
    `  operations client: ${clientId} (public, PKCE S256, redirect URI ${OPERATIONS_REDIRECT_URI}, resource ${OPERATIONS_RESOURCE}, scope "${OPERATOR_SCOPE}")`,
  );
  say(
    `  console client:   ${consoleClient.clientId} (confidential, client_secret_basic; secret in ${statePath(schema)})`,
  );
  say(
    `Operator access token: in ${operator.tokenFile} (tokens live 10 minutes; the demo renews the file while it serves)`,
  );
  say(`Try: export TOKEN=$(cat ${operator.tokenFile})`);
  say(`     curl -H "authorization: Bearer $TOKEN" ${manager.baseUrl}/api/v1/operations/jobs/${jobId}`);
  say(
    `     AWS_ACCESS_KEY_ID=${S3RVER_CREDENTIALS.accessKeyId} AWS_SECRET_ACCESS_KEY=${S3RVER_CREDENTIALS.secretAccessKey} aws --endpoint-url ${s3.endpoint} s3 ls s3://media-out/demo/${RUN}/`,
  );
}

/** The console's address and the operator's sign-in, each on a line of its own. */
function printConsoleSignIn(adminConsole: AdminConsole, state: DemoState): void {
  say(`\nAdmin console: ${adminConsole.url}`);
  say(`Operator: ${OPERATOR_EMAIL} / ${state.DEMO_OPERATOR_PASSWORD}`);
  say(`  (the password is kept in ${statePath(schema)}, with the demo's other keys)`);
}

// ---- the event stream and the progress bar ----------------------------------------------------

type EventData = Record<string, unknown>;

interface EventStream {
  onEvent(listener: (kind: string, data: EventData) => void): void;
}

/** GET /api/v1/operations/events, read until the clean-up; resolves once the Manager says "connected". */
async function subscribe(manager: ManagerProcess, token: string): Promise<EventStream> {
  const controller = new AbortController();
  const response = await fetch(`${manager.baseUrl}/api/v1/operations/events?kinds=job.updated,job.progress`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  let listener: (kind: string, data: EventData) => void = () => {};
  let connected: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    connected = resolve;
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const reading = (async () => {
    let buffer = "";
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        buffer += chunk.value;
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const lines = buffer.slice(0, end).split("\n");
          buffer = buffer.slice(end + 2);
          if (lines.includes(": connected")) connected();
          const kind = lines.find((line) => line.startsWith("event: "))?.slice(7);
          const data = lines.find((line) => line.startsWith("data: "))?.slice(6);
          if (kind && data) listener(kind, (JSON.parse(data) as { data: EventData }).data);
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  await within(10_000, "the Manager did not confirm the subscription", ready).catch(async (err) => {
    controller.abort();
    throw err;
  });
  onCleanup("the event stream", async () => {
    controller.abort();
    await reading;
  });
  return {
    onEvent(next) {
      listener = next;
    },
  };
}

/**
 * One progress bar per attempt: redrawn in place with \r on a terminal, otherwise a plain line
 * for each 10 % passed, 0 % to 100 % (logs, CI, the demo's test).
 */
class ProgressView {
  private readonly tty = process.stdout.isTTY === true;
  private attempt: string | undefined;
  private line = "";
  private lastTenth = -1;

  update(attempt: string, label: string, data: EventData): void {
    const percent = Math.min(100, Math.max(0, Number(data.percent)));
    if (attempt !== this.attempt) {
      this.done();
      this.attempt = attempt;
      this.lastTenth = -1;
    }
    // Before ffmpeg has encoded a frame its speed and ETA are guesses from nothing: leave them out.
    const encoding = typeof data.fps === "number" && data.fps > 0;
    const details = encoding
      ? [
          `${Math.round(data.fps as number)} fps`,
          typeof data.speed === "number" ? `${data.speed.toFixed(1)}x` : undefined,
          typeof data.etaSeconds === "number" ? `eta ${Math.ceil(data.etaSeconds)} s` : undefined,
        ].filter(Boolean)
      : [];
    if (this.tty) {
      const filled = Math.round((percent / 100) * 30);
      this.line = `${label}  [${"#".repeat(filled)}${"-".repeat(30 - filled)}] ${percent.toFixed(0).padStart(3)}%  ${details.join("  ")}`;
      process.stdout.write(`\r${this.line}\x1b[K`);
      return;
    }
    // One line per 10 % passed, also for the tenths a short encode passes between two updates
    // (the Manager forwards at most one a second); the figures go on the line of the update itself.
    const tenth = Math.floor(percent / 10);
    for (let passed = this.lastTenth + 1; passed <= tenth; passed++) {
      const figures = passed === tenth && details.length ? `  (${details.join(", ")})` : "";
      say(`${label}: ${String(passed * 10).padStart(3)}%${figures}`);
    }
    this.lastTenth = Math.max(this.lastTenth, tenth);
  }

  /** A line of its own: the bar so far stays above it, and the next update starts a new one. */
  note(text: string): void {
    this.done();
    say(text);
  }

  /** Ends the current bar's line. */
  done(): void {
    if (this.tty && this.line) process.stdout.write("\n");
    this.line = "";
  }
}

// ---- small helpers ----------------------------------------------------------------------------

function parseUri(uri: string): { bucket: string; key: string } {
  const [bucket, ...key] = uri.slice("s3://".length).split("/");
  return { bucket: bucket as string, key: key.join("/") };
}

async function download(s3: S3Server, uri: string): Promise<Buffer> {
  const { bucket, key } = parseUri(uri);
  const answer = await s3.client().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  if (!answer.Body) throw new Error(`${uri} has no body`);
  return Buffer.from(await answer.Body.transformToByteArray());
}

const short = (id: string) => id.slice(0, 8);
const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

// ---- main -------------------------------------------------------------------------------------

process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);
let exitCode = 0;
try {
  await demo();
} catch (err) {
  if (interrupted.signal.aborted) {
    say(`\nStopped: ${(interrupted.signal.reason as Error).message}.`);
    exitCode = 130;
  } else if (err instanceof StepFailed) {
    console.error(
      `\nThe demo failed at step "${err.step}":\n${err.reason instanceof Error ? err.reason.message : err.reason}`,
    );
    exitCode = 1;
  } else {
    console.error(`\nThe demo failed: ${(err as Error).stack ?? err}`);
    exitCode = 1;
  }
} finally {
  await cleanUp();
}
process.exit(exitCode);
