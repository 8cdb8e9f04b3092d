// Writes openapi/openapi.json from the Manager's route definitions (`npm run gen`).
import { writeFile } from "node:fs/promises";
import { silentLogger } from "@tjm/platform";
import { createApp } from "../manager/src/app.ts";
import { openApiInfo } from "../manager/src/docs/index.ts";

const noIo = new Proxy(
  {},
  {
    get() {
      throw new Error("emitting the OpenAPI document must not touch a dependency");
    },
  },
) as never;

const app = createApp({
  sql: noIo,
  broker: noIo,
  logger: silentLogger,
  auth: { tjm: { issuer: "https://issuer.invalid" }, operationsAudience: "tjm-operations" },
  maxBodyBytes: 1024 * 1024,
  liveProgress: () => undefined,
  scalarBundle: noIo,
  events: noIo,
  enrollmentTokenSecret: "emitting the document hashes no token",
  outboxWritten: () => {},
  workers: {
    subjectPrefix: "tjm",
    natsUrl: "nats://nats.invalid:4222",
    credentials: undefined,
    heartbeatIntervalMs: 5000,
    monitor: noIo,
    hooks: noIo,
    statistics: noIo,
  },
  jobs: { jobDeadlineHours: 72, applyOperatorRequest: noIo, storeJob: noIo, readLogTail: noIo },
  tenantAudience: "tjm-api",
  account: {
    delivery: noIo,
    reauthenticationMaxAgeSeconds: 300,
    oneTimeCodeKey: noIo,
    logoutsQueued: noIo,
    avatars: noIo,
    signInLimits: { accountLimit: 10, addressLimit: 100, windowSeconds: 900 },
    mfa: { secretKey: noIo, codeSendsPerHour: 5, issuer: "TJM", operatorSmsEmailAllowed: true },
    clientSecretKey: undefined,
  },
  authentication: { recovery: noIo, trustedProxies: [] },
  management: { clientSecretKey: undefined },
});
const document = app.getOpenAPI31Document(openApiInfo);
const target = new URL("./openapi.json", import.meta.url);
await writeFile(target, `${JSON.stringify(document, null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
