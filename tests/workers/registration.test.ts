import { createUser } from "@nats-io/nkeys";
import { registrationBody } from "@tjm/devstack/fixtures/worker-registration";
import { TEST_ENROLLMENT_SECRET } from "@tjm/devstack/oidc-issuer";
import { examples, PROTOCOL_VERSION } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokenHasher } from "../../manager/src/enrollment/tokens.ts";
import { TestManager } from "../harness/manager.ts";
import {
  challenge,
  credentialsBody,
  enroll,
  issueToken,
  postJson,
  reRegistrationBody,
  sign,
} from "../harness/workers.ts";

let manager: TestManager;

beforeAll(async () => {
  manager = await TestManager.start();
});
afterAll(async () => {
  await manager?.close();
});

const INVALID_TOKEN = {
  statusCode: 401,
  error: "Unauthorized",
  message: "The enrollment token is invalid, expired or already used",
  code: "enrollment.token_invalid",
  requestId: expect.any(String),
};

async function workerCount(): Promise<number> {
  const [row] = await manager.sql<{ count: number }[]>`select count(*)::int as count from workers`;
  return row?.count ?? 0;
}

const hashToken = createTokenHasher(TEST_ENROLLMENT_SECRET);

async function tokenUsed(token: string): Promise<boolean> {
  const [row] = await manager.sql<{ usedAt: Date | null }[]>`
    select used_at from enrollment_tokens where token_hash = ${await hashToken(token)}`;
  return row?.usedAt != null;
}

describe("registration with an enrollment token", () => {
  it("creates the Worker, ONLINE, and answers with its identity and NATS settings", async () => {
    const worker = await enroll(manager, { name: "encoder-a", capacityCap: 2 });
    expect(worker.registration).toEqual({
      protocolVersion: PROTOCOL_VERSION,
      workerId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      instanceId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      natsUrl: manager.natsUrl,
      subjectPrefix: manager.subjectPrefix,
      // This Manager runs NATS without authentication; tests/workers/nats-auth.test.ts covers JWTs.
      userJwt: null,
      userJwtExpiresAt: null,
      heartbeatIntervalMs: 5000,
    });
    const shown = await (await manager.request(`/api/v1/operations/workers/${worker.workerId}`)).json();
    expect(shown).toMatchObject({
      workerId: worker.workerId,
      instanceId: worker.instanceId,
      name: "encoder-a",
      pool: "cpu",
      connectivity: "ONLINE",
      certification: { status: "READY", reasons: [] },
      conditions: [],
      capacity: 2,
      profile: { hostCapacity: 8, capacityCap: 2 },
      capabilities: examples.workerRegistrationRequest.probe.capabilities,
      ffmpegVersion: examples.workerRegistrationRequest.probe.ffmpegVersion,
      activeAttempts: null,
      freeCapacity: null,
    });
  });

  it("lets exactly one of 50 concurrent registrations with one token through", async () => {
    const enrollmentToken = await issueToken(manager);
    const before = await workerCount();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        postJson(
          manager,
          "/api/v1/worker/registrations",
          registrationBody(createUser(), { enrollmentToken }),
        ),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 401)).toHaveLength(49);
    for (const response of responses.filter((r) => r.status === 401)) {
      expect(await response.json()).toEqual(INVALID_TOKEN);
    }
    expect(await workerCount()).toBe(before + 1);
  });

  it("answers unknown, used and expired tokens with the same 401", async () => {
    const used = await issueToken(manager);
    await postJson(
      manager,
      "/api/v1/worker/registrations",
      registrationBody(createUser(), { enrollmentToken: used }),
    );
    const expired = await issueToken(manager);
    await manager.sql`update enrollment_tokens set expires_at = now() - interval '1 second' where used_at is null`;
    for (const enrollmentToken of [`tjm_et_${"x".repeat(43)}`, used, expired]) {
      const response = await postJson(
        manager,
        "/api/v1/worker/registrations",
        registrationBody(createUser(), { enrollmentToken }),
      );
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(INVALID_TOKEN);
    }
  });

  it("refuses a Worker of another pool than its token's, leaving the token usable", async () => {
    const enrollmentToken = await issueToken(manager, { pool: "nvidia" });
    const refused = await postJson(
      manager,
      "/api/v1/worker/registrations",
      registrationBody(createUser(), { enrollmentToken, pool: "cpu" }),
    );
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      message: "This enrollment token is for the nvidia pool; the Worker declared cpu",
    });
    expect(await tokenUsed(enrollmentToken)).toBe(false);
    const accepted = await postJson(
      manager,
      "/api/v1/worker/registrations",
      registrationBody(createUser(), {
        enrollmentToken,
        pool: "nvidia",
        probe: {
          ...examples.workerRegistrationRequest.probe,
          certification: { status: "DEGRADED", reasons: ["h264_nvenc failed its self-test"] },
        },
      }),
    );
    expect(accepted.status).toBe(201);
  });

  it("refuses a second registration of the same NKey with 409, leaving the new token unused", async () => {
    const worker = await enroll(manager);
    const enrollmentToken = await issueToken(manager);
    const response = await postJson(
      manager,
      "/api/v1/worker/registrations",
      registrationBody(worker.keyPair, { enrollmentToken }),
    );
    expect(response.status).toBe(409);
    expect((await response.json()).message).toContain("re-registers by answering a challenge");
    expect(await tokenUsed(enrollmentToken)).toBe(false);
  });
});

describe("malformed registrations change nothing", () => {
  const publicKey = createUser().getPublicKey();
  // A valid-looking key whose checksum is wrong: the last characters changed.
  const badChecksum = `${publicKey.slice(0, -2)}${publicKey.endsWith("AA") ? "BB" : "AA"}`;

  it.each<[string, (token: string) => unknown, string[]]>([
    [
      "a public key with a wrong checksum",
      (t) => registrationBody(createUser(), { enrollmentToken: t, publicKey: badChecksum }),
      ["publicKey"],
    ],
    [
      "an NKey seed instead of the public key",
      (t) => ({
        ...registrationBody(createUser(), { enrollmentToken: t }),
        publicKey: `SU${"A".repeat(56)}`,
      }),
      ["publicKey"],
    ],
    [
      "another protocol version",
      (t) => ({ ...registrationBody(createUser(), { enrollmentToken: t }), protocolVersion: 1 }),
      ["protocolVersion"],
    ],
    [
      "a missing probe and pool",
      (t) => {
        const { probe, pool, ...rest } = registrationBody(createUser(), { enrollmentToken: t });
        return rest;
      },
      ["pool", "probe"],
    ],
    [
      "a DEGRADED certification without reasons",
      (t) =>
        registrationBody(createUser(), {
          enrollmentToken: t,
          probe: {
            ...examples.workerRegistrationRequest.probe,
            certification: { status: "DEGRADED", reasons: [] },
          },
        }),
      ["probe.certification.reasons"],
    ],
    [
      "a name with a control character",
      (t) => registrationBody(createUser(), { enrollmentToken: t, name: "bad\nname" }),
      ["name"],
    ],
    ["an array body", () => [], ["body"]],
  ])("%s: 400 at the offending paths", async (_, body, paths) => {
    const enrollmentToken = await issueToken(manager);
    const before = await workerCount();
    const response = await postJson(manager, "/api/v1/worker/registrations", body(enrollmentToken));
    expect(response.status).toBe(400);
    const answer = await response.json();
    expect(answer.message).toBe("Validation failed");
    expect(answer.details.map((detail: { path: string }) => detail.path).sort()).toEqual(paths);
    expect(await workerCount()).toBe(before);
    expect(await tokenUsed(enrollmentToken)).toBe(false);
  });

  it("an oversized body: 413 before parsing", async () => {
    const enrollmentToken = await issueToken(manager);
    const body = registrationBody(createUser(), { enrollmentToken, name: "x".repeat(2 * 1024 * 1024) });
    const response = await postJson(manager, "/api/v1/worker/registrations", body);
    expect(response.status).toBe(413);
    expect(await tokenUsed(enrollmentToken)).toBe(false);
  });

  it("not JSON: 400, or 415 without a JSON content type", async () => {
    const bad = await fetch(`${manager.baseUrl}/api/v1/worker/registrations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    const text = await fetch(`${manager.baseUrl}/api/v1/worker/registrations`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hello",
    });
    expect([400, 415]).toContain(text.status);
  });
});

describe("re-registration after a restart", () => {
  it("keeps the workerId, starts a new instance and needs no token", async () => {
    const worker = await enroll(manager);
    const response = await postJson(
      manager,
      "/api/v1/worker/re-registrations",
      await reRegistrationBody(manager, worker),
    );
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.workerId).toBe(worker.workerId);
    expect(answer.instanceId).not.toBe(worker.instanceId);
    const shown = await (await manager.request(`/api/v1/operations/workers/${worker.workerId}`)).json();
    expect(shown.instanceId).toBe(answer.instanceId);
  });

  it("refuses a replayed answer, another key's signature, another purpose's challenge and another Worker's challenge", async () => {
    const worker = await enroll(manager);
    const other = await enroll(manager);
    const body = await reRegistrationBody(manager, worker);
    expect((await postJson(manager, "/api/v1/worker/re-registrations", body)).status).toBe(200);
    const instanceAfterFirst = (
      await (await manager.request(`/api/v1/operations/workers/${worker.workerId}`)).json()
    ).instanceId;

    const replayed = await postJson(manager, "/api/v1/worker/re-registrations", body);
    expect(replayed.status).toBe(401);

    const fresh = await challenge(manager, worker.workerId, "re-registration");
    const wrongKey = await postJson(manager, "/api/v1/worker/re-registrations", {
      ...body,
      challengeId: fresh.challengeId,
      signature: sign(createUser(), worker.workerId, fresh),
    });
    expect(wrongKey.status).toBe(401);

    const forCredentials = await challenge(manager, worker.workerId, "credentials");
    const wrongPurpose = await postJson(manager, "/api/v1/worker/re-registrations", {
      ...body,
      challengeId: forCredentials.challengeId,
      // Signed as if for re-registration: the purpose is part of what is signed and stored.
      signature: sign(worker.keyPair, worker.workerId, { ...forCredentials, purpose: "re-registration" }),
    });
    expect(wrongPurpose.status).toBe(401);

    const othersChallenge = await challenge(manager, other.workerId, "re-registration");
    const crossed = await postJson(manager, "/api/v1/worker/re-registrations", {
      ...body,
      challengeId: othersChallenge.challengeId,
      signature: sign(worker.keyPair, worker.workerId, othersChallenge),
    });
    expect(crossed.status).toBe(401);

    for (const refused of [replayed, wrongKey, wrongPurpose, crossed]) {
      expect(await refused.json()).toEqual({
        statusCode: 401,
        error: "Unauthorized",
        message: "The challenge is unknown, expired, already used, or its signature does not verify",
        code: "worker.proof_invalid",
        requestId: refused.headers.get("x-request-id"),
      });
    }
    const shown = await (await manager.request(`/api/v1/operations/workers/${worker.workerId}`)).json();
    expect(shown.instanceId).toBe(instanceAfterFirst);
  });

  it("refuses an expired challenge", async () => {
    const worker = await enroll(manager);
    const body = await reRegistrationBody(manager, worker);
    await manager.sql`update worker_challenges set expires_at = now() - interval '1 second' where id = ${body.challengeId}`;
    expect((await postJson(manager, "/api/v1/worker/re-registrations", body)).status).toBe(401);
  });

  it("refuses to move a Worker to another pool (409) and an unknown Worker (404)", async () => {
    const worker = await enroll(manager);
    const moved = await postJson(manager, "/api/v1/worker/re-registrations", {
      ...(await reRegistrationBody(manager, worker)),
      pool: "amd",
    });
    expect(moved.status).toBe(409);
    expect((await moved.json()).message).toContain("registered in the cpu pool, not amd");

    const unknown = await postJson(manager, "/api/v1/worker/challenges", {
      protocolVersion: PROTOCOL_VERSION,
      workerId: crypto.randomUUID(),
      purpose: "re-registration",
    });
    expect(unknown.status).toBe(404);
  });
});

describe("credentials refresh", () => {
  it("answers the current instance and refuses an old one", async () => {
    const worker = await enroll(manager);
    const answered = await challenge(manager, worker.workerId, "credentials");
    const refreshed = await postJson(
      manager,
      "/api/v1/worker/credentials",
      credentialsBody(worker, answered),
    );
    expect(refreshed.status).toBe(200);
    expect(await refreshed.json()).toEqual({
      protocolVersion: PROTOCOL_VERSION,
      userJwt: null,
      userJwtExpiresAt: null,
    });

    await postJson(manager, "/api/v1/worker/re-registrations", await reRegistrationBody(manager, worker));
    const again = await challenge(manager, worker.workerId, "credentials");
    // The instance the re-registration replaced.
    const stale = await postJson(manager, "/api/v1/worker/credentials", credentialsBody(worker, again));
    expect(stale.status).toBe(409);
    expect((await stale.json()).message).toContain("is no longer current");
  });
});
