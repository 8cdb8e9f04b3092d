/**
 * The Admin console process: `npm run admin` serves it, `npm run admin -- migrate` applies its
 * migrations (admin/migrations) and exits.
 */
import { serve } from "@hono/node-server";
import { createLogger } from "@tjm/platform";
import { createAdminApp } from "./app.ts";
import { parseEnv, redactConfig } from "./config.ts";
import { createSql } from "./platform/db.ts";
import { loadMigrations, migrate } from "./platform/migrations.ts";
import { sessionCookieFor } from "./sessions/cookie.ts";
import { createSealer } from "./sessions/sealing.ts";
import { Sessions } from "./sessions/sessions.ts";
import { RelyingParty } from "./sign-in/relying-party.ts";

const EXPIRED_SWEEP_MS = 10 * 60_000;

const parsed = parseEnv(process.env);
if (!parsed.ok) {
  console.error(`invalid configuration:\n${parsed.problems.join("\n")}`);
  process.exit(2);
}
const config = parsed.config;
const logger = createLogger(config.LOG_LEVEL, console.log);
const sql = createSql({
  url: config.DATABASE_URL,
  schema: config.DATABASE_SCHEMA,
  poolMax: config.DATABASE_POOL_MAX,
});

if (process.argv[2] === "migrate") {
  const applied = await migrate(sql, config.DATABASE_SCHEMA, await loadMigrations());
  console.log(JSON.stringify({ applied: applied.map((m) => `${m.version}_${m.name}`) }));
  await sql.end();
  process.exit(0);
}

const cookie = sessionCookieFor(config.ADMIN_PUBLIC_URL);
if (!cookie.secure) {
  logger.warn(
    "ADMIN_PUBLIC_URL is plain http on a non-loopback host: the session cookie is tjm_admin without Secure or the __Host- prefix; serve the console over https",
  );
}
const relyingParty = new RelyingParty({
  issuer: config.OIDC_ISSUER_URL,
  clientId: config.ADMIN_CLIENT_ID,
  clientSecret: config.ADMIN_CLIENT_SECRET,
  audience: config.OIDC_OPERATIONS_ADMIN_AUDIENCE,
});
const sessions = new Sessions({
  sql,
  sealer: createSealer(config.ADMIN_SESSION_KEY),
  relyingParty,
  idleMinutes: config.ADMIN_SESSION_IDLE_MINUTES,
  absoluteHours: config.ADMIN_SESSION_ABSOLUTE_HOURS,
  logger,
});
const admin = createAdminApp({
  publicOrigin: config.ADMIN_PUBLIC_URL,
  managerUrl: config.MANAGER_URL,
  maxBodyBytes: config.MAX_BODY_BYTES,
  sessions,
  relyingParty,
  cookie,
  logger,
  sql,
});
const sweep = setInterval(() => void sessions.deleteExpired().catch(() => {}), EXPIRED_SWEEP_MS);
const server = serve({ fetch: admin.app.fetch, hostname: config.HOST, port: config.PORT }, (info) =>
  logger.info("admin console listening", { port: info.port, config: redactConfig(config) }),
);

let stopping = false;
const shutdown = () => {
  if (stopping) return;
  stopping = true;
  clearInterval(sweep);
  admin.stop();
  server.close(() => void sql.end({ timeout: 2 }).then(() => process.exit(0)));
  setTimeout(() => process.exit(1), 10_000).unref();
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
