import { jetstream } from "@nats-io/jetstream";
import { createUser } from "@nats-io/nkeys";
import { connect, credsAuthenticator, jwtAuthenticator } from "@nats-io/transport-node";
import { samplePlan } from "@tjm/devstack/fixtures/plans";
import { registrationBody } from "@tjm/devstack/fixtures/worker-registration";
import {
  type ManagerProcess,
  type ManagerRuntime,
  runScript,
  startManagerProcess,
} from "@tjm/devstack/manager-process";
import { type OperatorModeNats, startOperatorModeNats } from "@tjm/devstack/nats-operator";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET, TestIssuer } from "@tjm/devstack/oidc-issuer";
import { waitFor } from "@tjm/devstack/services";
import { streams, type WorkerRegistrationResponse, workerInboxPrefix } from "@tjm/protocol";
import { createTjmClient } from "@tjm/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSchema, testServices } from "./harness/manager.ts";
import { heartbeat } from "./harness/workers.ts";

describe.each<ManagerRuntime>(["node", "deno"])("the Manager on %s, through the generated SDK", (runtime) => {
  let nats: OperatorModeNats;
  let issuer: TestIssuer;
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let manager: ManagerProcess;
  let projectId: string;

  beforeAll(async () => {
    const services = testServices();
    issuer = await TestIssuer.start();
    schema = await createTestSchema(services.databaseUrl);
    // NATS in operator mode, as in production: the Manager connects with its .creds file and
    // signs Worker JWTs with the account signing key.
    nats = await startOperatorModeNats();
    const env = {
      DATABASE_URL: services.databaseUrl,
      DATABASE_SCHEMA: schema.schema,
      NATS_URL: nats.url,
      NATS_CREDS_FILE: nats.managerCredsFile,
      NATS_ACCOUNT_PUBLIC_KEY: nats.accountPublicKey,
      NATS_ACCOUNT_SIGNING_KEY_SEED: nats.accountSigningSeed,
      NATS_SUBJECT_PREFIX: schema.schema,
      OIDC_ISSUER_URL: issuer.issuer,
      OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
      ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
      // No job runs here, so storage is never reached.
      S3_ENDPOINT: "http://127.0.0.1:1",
      S3_ACCESS_KEY_ID: "unused",
      S3_SECRET_ACCESS_KEY: "unused",
    };
    const created = await runScript(
      ["manager", "--", "projects", "create", "--org", "acme", "--name", runtime],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    ({ projectId } = JSON.parse(created.stdout));
    manager = await startManagerProcess(runtime, env);
  }, 90_000);
  afterAll(async () => {
    await manager?.stop();
    await nats?.stop();
    await issuer?.close();
    await schema?.drop();
  });

  it("answers health, submit, get, list, cancel and retry-409", async () => {
    const client = createTjmClient({ baseUrl: manager.baseUrl, token: () => issuer.token() });

    const ready = await client.GET("/api/health/ready");
    expect(ready.response.status).toBe(200);
    expect(ready.data?.status).toBe("ok");

    const submitted = await client.POST("/api/v1/operations/jobs", {
      body: { projectId, priority: 10, executionPlan: samplePlan() as never },
    });
    expect(submitted.response.status).toBe(201);
    const jobId = submitted.data?.id ?? "";
    expect(submitted.data).toMatchObject({
      state: "QUEUED",
      priority: 10,
      currentAttempt: { state: "CREATED", progress: 0 },
    });

    const got = await client.GET("/api/v1/operations/jobs/{jobId}", { params: { path: { jobId } } });
    expect(got.data?.attempts).toHaveLength(1);
    expect(got.data?.executionPlan.outputs[0]?.id).toBe("720p");

    const listed = await client.GET("/api/v1/operations/jobs", { params: { query: { state: "QUEUED" } } });
    expect(listed.data?.items.map((job) => job.id)).toEqual([jobId]);
    expect(listed.data?.total).toBe(1);

    const cancelled = await client.POST("/api/v1/operations/jobs/{jobId}/cancel", {
      params: { path: { jobId } },
    });
    expect(cancelled.response.status).toBe(202);
    expect(cancelled.data?.state).toBe("CANCELLED");

    const retried = await client.POST("/api/v1/operations/jobs/{jobId}/retry", {
      params: { path: { jobId } },
    });
    expect(retried.response.status).toBe(409);
    expect(retried.error).toMatchObject({ statusCode: 409, error: "Conflict" });
  });

  it("announces its changes on the events stream through the outbox relay", async () => {
    const client = createTjmClient({ baseUrl: manager.baseUrl, token: () => issuer.token() });
    const submitted = await client.POST("/api/v1/operations/jobs", {
      body: { projectId, executionPlan: samplePlan() as never },
    });
    const jobId = submitted.data?.id ?? "";
    await client.POST("/api/v1/operations/jobs/{jobId}/cancel", { params: { path: { jobId } } });

    const nc = await connect({
      servers: nats.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(nats.managerCreds)),
    });
    try {
      const stream = streams(schema.schema).events.name;
      const kinds: string[] = [];
      await waitFor("job events", async () => {
        kinds.length = 0;
        const consumer = await jetstream(nc).consumers.get(stream);
        const batch = await consumer.fetch({ max_messages: 100, expires: 1000 });
        for await (const message of batch) {
          const envelope = message.json<{ kind: string; data: { jobId: string } }>();
          if (envelope.data.jobId === jobId) kinds.push(envelope.kind);
        }
        return kinds.length === 2;
      });
      expect(kinds).toEqual(["job.created", "job.updated"]);
    } finally {
      await nc.close();
    }
  });

  it("enrolls a Worker whose user JWT the NATS server accepts, and hears its heartbeats", async () => {
    const client = createTjmClient({ baseUrl: manager.baseUrl, token: () => issuer.token() });
    const issued = await client.POST("/api/v1/operations/enrollment-tokens", { body: { pool: "cpu" } });
    expect(issued.response.status).toBe(201);
    const keyPair = createUser();
    const registered = await client.POST("/api/v1/worker/registrations", {
      body: registrationBody(keyPair, { enrollmentToken: issued.data?.token ?? "" }),
    });
    expect(registered.response.status).toBe(201);
    const worker = registered.data as WorkerRegistrationResponse;
    expect(worker.natsUrl).toBe(nats.url);
    const nc = await connect({
      servers: worker.natsUrl,
      authenticator: jwtAuthenticator(worker.userJwt ?? "", keyPair.getSeed()),
      inboxPrefix: workerInboxPrefix(worker.subjectPrefix, worker.workerId),
    });
    try {
      await waitFor("the heartbeat", async () => {
        heartbeat(nc, worker.subjectPrefix, worker, 5);
        const shown = await client.GET("/api/v1/operations/workers/{workerId}", {
          params: { path: { workerId: worker.workerId } },
        });
        return shown.data?.freeCapacity === 5 && shown.data.connectivity === "ONLINE";
      });
    } finally {
      await nc.close();
    }
  });

  it("serves the OpenAPI document and Scalar with its bundle from the installed package, no CDN", async () => {
    const document = await (await fetch(`${manager.baseUrl}/api/v1/openapi.json`)).json();
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toContain("/api/v1/operations/jobs/{jobId}/retry");

    const page = await (await fetch(`${manager.baseUrl}/api/docs`)).text();
    expect(page).toContain('src="/api/docs/scalar.js"');
    expect(page).not.toMatch(/https?:\/\/(cdn|unpkg|fonts)\./);
    const bundle = await fetch(`${manager.baseUrl}/api/docs/scalar.js`);
    expect(bundle.headers.get("content-type")).toContain("javascript");
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
  });

  it("shuts down gracefully on SIGTERM", async () => {
    await manager.stop();
    expect(manager.output()).toContain('"msg":"shutting down"');
    expect(manager.output()).not.toContain("shutdown took too long");
  });
});
