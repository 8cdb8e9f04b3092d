import { TEST_ENROLLMENT_SECRET } from "@tjm/devstack/oidc-issuer";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeEnrollmentToken, createTokenHasher } from "../../manager/src/enrollment/index.ts";
import { TestManager } from "../harness/manager.ts";

let manager: TestManager;
const hash = createTokenHasher(TEST_ENROLLMENT_SECRET);

beforeAll(async () => {
  manager = await TestManager.start();
});
afterAll(() => manager?.close());

const issue = (json?: unknown) =>
  manager.request("/api/v1/operations/enrollment-tokens", {
    method: "POST",
    ...(json === undefined ? {} : { json }),
  });

describe("POST /api/v1/operations/enrollment-tokens", () => {
  it("issues a one-hour token without a body and stores only its HMAC", async () => {
    const before = Date.now();
    const response = await issue();
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body).toEqual({
      id: expect.any(String),
      token: expect.stringMatching(/^tjm_et_/),
      expiresAt: expect.any(String),
      pool: null,
      label: null,
    });
    const lifetime = Date.parse(body.expiresAt) - before;
    expect(lifetime).toBeGreaterThan(3590_000);
    expect(lifetime).toBeLessThan(3610_000);

    const [row] = await manager.sql`select * from enrollment_tokens where id = ${body.id}`;
    expect(Buffer.from(row?.tokenHash)).toEqual(Buffer.from(await hash(body.token)));
    // The operator, named by the subject of the token that asked: its account's id.
    const operator = decodeJwt(await manager.operatorToken()).sub;
    expect(row).toMatchObject({ createdBy: operator, usedAt: null });
    const everything = JSON.stringify(await manager.sql`select * from enrollment_tokens`);
    expect(everything).not.toContain(body.token.slice("tjm_et_".length));
  });

  it("takes a lifetime, a pool and a label", async () => {
    const response = await issue({ ttlSeconds: 600, pool: "nvidia", label: "gpu-03" });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ pool: "nvidia", label: "gpu-03" });
  });

  it("refuses a lifetime outside 60 s .. 7 days and an unknown pool, naming each", async () => {
    const response = await issue({ ttlSeconds: 30, pool: "tpu" });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.details.map((detail: { path: string }) => detail.path).sort()).toEqual([
      "pool",
      "ttlSeconds",
    ]);
    expect((await issue({ ttlSeconds: 7 * 24 * 3600 + 1 })).status).toBe(400);
  });

  it("refuses a label with a control character (PostgreSQL text cannot hold U+0000) with 400, not 500", async () => {
    for (const label of ["\u0000", "host\u0007", "a\u009fb"]) {
      const response = await issue({ label });
      expect(response.status, JSON.stringify(label)).toBe(400);
      const body = await response.json();
      expect(body.details).toEqual([
        expect.objectContaining({ path: "label", message: "must not contain control characters" }),
      ]);
    }
  });

  it("needs an operator token", async () => {
    const response = await manager.request("/api/v1/operations/enrollment-tokens", {
      method: "POST",
      headers: { authorization: "Bearer nope" },
    });
    expect(response.status).toBe(401);
  });
});

describe("consuming an enrollment token", () => {
  it("succeeds exactly once among 50 concurrent attempts", async () => {
    const { token } = await (await issue()).json();
    const tokenHash = await hash(token);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => consumeEnrollmentToken(manager.sql, tokenHash)),
    );
    expect(results.filter((result) => result !== undefined)).toHaveLength(1);
  });

  it("treats unknown, used and expired tokens alike", async () => {
    const used = (await (await issue()).json()).token;
    await consumeEnrollmentToken(manager.sql, await hash(used));
    const expired = await (await issue()).json();
    await manager.sql`update enrollment_tokens set expires_at = now() - interval '1 second' where id = ${expired.id}`;

    for (const token of ["tjm_et_unknown", used, expired.token]) {
      expect(await consumeEnrollmentToken(manager.sql, await hash(token))).toBeUndefined();
    }
  });
});
