/**
 * The connection-drop reproductions of postgres.js 3.4.9 (docs/architecture.md, "PostgreSQL driver"),
 * one per run: `<runtime> tests/database/reproductions.ts <scenario>` with DATABASE_URL set. It
 * runs on Node, Deno and Bun unchanged; a crash (an uncaught error or an unhandled rejection)
 * is this process's exit, seen by the test that spawned it. Otherwise it prints one JSON
 * line, the outcome, and exits 0.
 *
 * Only backends this process opened are terminated: each client carries an application_name
 * made unique for the run.
 */
import type { Buffer } from "node:buffer";
import net from "node:net";
import process from "node:process";
import { createInterface } from "node:readline";
import postgres from "postgres";
import { createSql } from "../../manager/src/platform/db.ts";

// What Node does by default, on every runtime: Bun only prints an uncaught error from a timer
// callback or an unhandled rejection and carries on.
for (const event of ["uncaughtException", "unhandledRejection"] as const) {
  process.on(event, (err: unknown) => {
    process.stderr.write(`${event}: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(70);
  });
}

const databaseUrl = process.env.DATABASE_URL as string;
const scenario = process.argv[2] ?? "";
const runId = crypto.randomUUID().slice(0, 8);
const applicationName = `tjm-drop-${scenario}-${runId}`;

/** How long anything may take before the outcome says it did not settle. */
const BOUND_MS = 4000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function errorCode(err: unknown): string {
  const { code, message } = err as { code?: string; message?: string };
  return code ?? message ?? String(err);
}

/** What `work` came to, or "unsettled" when it had not settled within BOUND_MS. */
async function within<T>(work: Promise<T>): Promise<T | "unsettled"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<"unsettled">((resolve) => {
    timer = setTimeout(() => resolve("unsettled"), BOUND_MS);
  });
  try {
    return await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

const settles = (work: Promise<unknown>) => within(work.then(() => "settled"));

/** A client whose backends carry this run's application_name. */
function client(options: postgres.Options<Record<string, postgres.PostgresType>>, url = databaseUrl) {
  return postgres(url, {
    onnotice: () => {},
    ...options,
    connection: { application_name: applicationName, ...options.connection },
  });
}

/** The other session, which terminates this run's backends. */
const admin = postgres(databaseUrl, {
  max: 1,
  onnotice: () => {},
  connection: { application_name: `${applicationName}-admin` },
});

/** Terminates this run's backend once it is running `pg_sleep` (so a query is in flight). */
async function terminateSleepingBackend(): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while (Date.now() < deadline) {
    const killed = await admin`
      select pg_terminate_backend(pid) as killed from pg_stat_activity
      where application_name = ${applicationName} and state = 'active' and query like '%pg_sleep%'`;
    if (killed.length > 0) return;
    await pause(20);
  }
  throw new Error(`no backend of ${applicationName} was running pg_sleep within ${BOUND_MS} ms`);
}

/** Terminates this run's backends whatever they are doing (the proxy holds the lookup back). */
async function terminateIdleBackend(): Promise<void> {
  await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${applicationName}`;
}

/**
 * A TCP proxy in front of PostgreSQL that interferes with the first array-type lookup a
 * connection sends when it opens (its SQL names `typarray`): "timeout" turns it into a
 * `pg_sleep` of the same length, which the server cancels under a 1 ms statement_timeout;
 * "terminate" holds it back and terminates the backend, as if it died during the lookup.
 * Everything after that passes through untouched.
 */
async function typeLookupProxy(interfere: "timeout" | "terminate"): Promise<string> {
  const target = new URL(databaseUrl);
  let done = false;
  const server = net.createServer((downstream) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    upstream.on("data", (chunk) => downstream.write(chunk));
    upstream.on("end", () => downstream.end());
    upstream.on("error", () => downstream.destroy());
    downstream.on("end", () => upstream.end());
    downstream.on("error", () => upstream.destroy());
    downstream.on("data", (chunk: Buffer) => {
      const start = chunk.indexOf("select b.oid, b.typarray");
      if (done || start < 0) {
        upstream.write(chunk);
        return;
      }
      done = true;
      if (interfere === "terminate") {
        void terminateIdleBackend();
        return;
      }
      const end = chunk.indexOf("order by b.oid", start) + "order by b.oid".length;
      chunk.write("select pg_sleep(1)".padEnd(end - start, " "), start);
      upstream.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const proxied = new URL(databaseUrl);
  proxied.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return proxied.toString();
}

/** 1. A transaction whose backend dies: begin() then sends ROLLBACK on the dead connection. */
async function transaction() {
  const sql = client({ max: 1 });
  const committed = sql.begin((tx) => tx`select pg_sleep(2)`).then(() => "committed", errorCode);
  await terminateSleepingBackend();
  const outcome = await within(committed);
  // The ROLLBACK's write is deferred to setImmediate: give it its turn.
  await pause(100);
  const next = await within(sql`select 1 as one`.then(([row]) => row?.one, errorCode));
  return { transaction: outcome, next, end: await settles(sql.end()) };
}

/** 2. A reserved connection whose backend dies, released back into the pool. */
async function reserved() {
  const sql = client({ max: 1 });
  const connection = await sql.reserve();
  const sleeping = connection`select pg_sleep(2)`.then(() => "answered", errorCode);
  await terminateSleepingBackend();
  const query = await within(sleeping);
  connection.release();
  const next = await within(
    Promise.all([1, 2, 3].map((n) => sql`select ${n}::int as n`.then(([row]) => row?.n))).catch(errorCode),
  );
  return { reservedQuery: query, next, end: await settles(sql.end()) };
}

/** 3. The array-type lookup at connect cancelled by statement_timeout. */
async function typeLookupTimeout() {
  const sql = client({ max: 1, connection: { statement_timeout: 1 } }, await typeLookupProxy("timeout"));
  const first = await within(sql`select 1 as one`.then(([row]) => row?.one, errorCode));
  // An unhandled rejection ends the process on the next turns of the event loop.
  await pause(100);
  return { first, end: await settles(sql.end()) };
}

/** 3. The backend terminated during the array-type lookup: the reconnect must start clean. */
async function typeLookupTerminated() {
  const sql = client({ max: 1 }, await typeLookupProxy("terminate"));
  const first = await within(sql`select 1 as one`.then(([row]) => row?.one, errorCode));
  await pause(100);
  return { first, end: await settles(sql.end()) };
}

/** 4. end() after the backend of an in-flight query died. */
async function endAfterDrop() {
  const sql = client({ max: 1 });
  const sleeping = sql`select pg_sleep(2)`.then(() => "answered", errorCode);
  await terminateSleepingBackend();
  return { query: await within(sleeping), end: await settles(sql.end()) };
}

/** 4. end() called while a query runs, then its backend dies. */
async function endDuringDrop() {
  const sql = client({ max: 1 });
  const sleeping = sql`select pg_sleep(2)`.then(() => "answered", errorCode);
  const ending = sql.end();
  await terminateSleepingBackend();
  return { query: await within(sleeping), end: await settles(ending) };
}

/**
 * 5. The Manager's own client (createSql) under the Manager's kind of load — transactions
 * and plain queries — while the parent stops and starts PostgreSQL. Prints `up` at the first
 * success and at the first success after failures, `down` at the first failure after
 * successes; stops on a `finish` line on stdin.
 */
async function outage() {
  const sql = createSql({ url: databaseUrl, schema: "public", poolMax: 4, applicationName });
  let state: "starting" | "up" | "down" = "starting";
  let ups = 0;
  const failures = new Map<string, number>();
  let finishing = false;
  const record = (ok: boolean, err?: unknown) => {
    if (ok && state !== "up") {
      state = "up";
      ups++;
      process.stdout.write("up\n");
    } else if (!ok) {
      const code = errorCode(err);
      failures.set(code, (failures.get(code) ?? 0) + 1);
      if (state === "up") {
        state = "down";
        process.stdout.write("down\n");
      }
    }
  };
  const loop = async (work: () => Promise<unknown>) => {
    while (!finishing) {
      await work().then(
        () => record(true),
        (err) => record(false, err),
      );
      if (state !== "up") await pause(50);
    }
  };
  const transactions = Array.from({ length: 6 }, () =>
    loop(() =>
      sql.begin(async (tx) => {
        await tx`select pg_sleep(0.05)`;
        await tx`select 1`;
      }),
    ),
  );
  const plain = loop(() => sql`select pg_sleep(0.02)`);
  await new Promise<void>((resolve) => {
    createInterface({ input: process.stdin }).on("line", (line) => {
      if (line === "finish") resolve();
    });
  });
  finishing = true;
  const loops = await settles(Promise.all([...transactions, plain]));
  return { ups, loops, end: await settles(sql.end()), failures: Object.fromEntries(failures) };
}

const scenarios: Record<string, () => Promise<unknown>> = {
  transaction,
  reserved,
  "type-lookup-timeout": typeLookupTimeout,
  "type-lookup-terminated": typeLookupTerminated,
  "end-after-drop": endAfterDrop,
  "end-during-drop": endDuringDrop,
  outage,
};

const run = scenarios[scenario];
if (!run) throw new Error(`unknown scenario "${scenario}"; one of ${Object.keys(scenarios).join(", ")}`);
const outcome = await run();
await admin.end({ timeout: 1 });
process.stdout.write(`${JSON.stringify(outcome)}\n`);
process.exit(0);
