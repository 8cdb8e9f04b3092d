import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AUDIT_EVENTS,
  type AuditDetails,
  RefusedAuditDetailError,
  writeAuditEvent,
} from "../../manager/src/identity/audit.ts";
import type { Sql } from "../../manager/src/platform/db.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: Sql;

beforeAll(async () => {
  schema = await createTestSchema(testServices().databaseUrl);
  sql = schema.sql;
});
afterAll(() => schema?.drop());

const rowsFor = (clientId: string) =>
  sql`select * from audit_events where client_id = ${clientId} order by id`;

describe("writeAuditEvent", () => {
  it("writes one row per call with every field given", async () => {
    const clientId = `client-${crypto.randomUUID()}`;
    const actorAccountId = crypto.randomUUID();
    await writeAuditEvent(sql, {
      event: "auth.sign-in",
      result: "failure",
      actorAccountId,
      clientId,
      address: "192.0.2.10",
      details: { reason: "invalid-credentials", attempt: 3, remembered: false, via: null, amr: ["pwd"] },
    });
    await writeAuditEvent(sql, { event: "auth.logout", result: "success", clientId });

    const rows = await rowsFor(clientId);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      event: "auth.sign-in",
      result: "failure",
      actorAccountId,
      clientId,
      address: "192.0.2.10",
      details: { reason: "invalid-credentials", attempt: 3, remembered: false, via: null, amr: ["pwd"] },
    });
    expect(rows[0]?.at).toBeInstanceOf(Date);
    expect(rows[1]).toMatchObject({
      event: "auth.logout",
      result: "success",
      actorAccountId: null,
      address: null,
      details: {},
    });
  });

  it("stores an IPv6 client address", async () => {
    const clientId = `client-${crypto.randomUUID()}`;
    await writeAuditEvent(sql, {
      event: "auth.sign-in",
      result: "success",
      clientId,
      address: "2001:db8::1",
    });
    expect((await rowsFor(clientId))[0]?.address).toBe("2001:db8::1");
  });

  it.each([
    "password",
    "newPassword",
    "clientSecret",
    "refresh_token",
    "TokenId",
    "userCode",
    "CODE_VERIFIER",
  ])("refuses a detail named %s and writes nothing", async (key) => {
    const clientId = `client-${crypto.randomUUID()}`;
    const details = { reason: "x", [key]: "hunter2" } as unknown as AuditDetails;
    const writing = writeAuditEvent(sql, { event: "auth.sign-in", result: "failure", clientId, details });
    await expect(writing).rejects.toThrow(RefusedAuditDetailError);
    await expect(writing).rejects.toThrow(`audit detail '${key}' is refused`);
    expect(await rowsFor(clientId)).toHaveLength(0);
  });

  it("refuses a nested object, where a secret could hide from the key check", async () => {
    const clientId = `client-${crypto.randomUUID()}`;
    const details = { request: { password: "hunter2" } } as unknown as AuditDetails;
    await expect(
      writeAuditEvent(sql, { event: "auth.sign-in", result: "failure", clientId, details }),
    ).rejects.toThrow("audit detail 'request' is refused: not a plain value");
    expect(await rowsFor(clientId)).toHaveLength(0);
  });

  it("names events as the rows already stored name them: <subject>.<what happened>", () => {
    expect(AUDIT_EVENTS).toEqual(
      expect.arrayContaining([
        "account.created",
        "account.role-granted",
        "client.created",
        "provider.key-rotated",
      ]),
    );
    for (const event of AUDIT_EVENTS) expect(event).toMatch(/^[a-z]+\.[a-z]+(-[a-z]+)*$/);
  });

  it("refuses secret-like detail keys in the type, too", () => {
    // @ts-expect-error: a key that names a password
    const password: AuditDetails = { password: "x" };
    // @ts-expect-error: a key that names a token, capitalised
    const token: AuditDetails = { refreshToken: "x" };
    // @ts-expect-error: a key that names a secret, in capitals
    const secret: AuditDetails = { CLIENT_SECRET: "x" };
    const plain: AuditDetails = {
      reason: "x",
      grantRevoked: true,
      scopes: ["openid"],
      attempts: 1,
      kid: null,
    };
    expect([password, token, secret, plain]).toHaveLength(4);
  });
});
