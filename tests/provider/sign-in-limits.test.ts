import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  accountKey,
  addressKey,
  createSignInLimiter,
  type ReserveResult,
  retryAfterSeconds,
  type SignInLimiter,
} from "../../manager/src/identity/accounts/sign-in-limits.ts";
import { createSql, type Sql } from "../../manager/src/platform/db.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: Sql;
/** Other pools on the same schema: replicas, and room for real concurrency. */
const extraPools: Sql[] = [];

beforeAll(async () => {
  schema = await createTestSchema(testServices().databaseUrl);
  sql = schema.sql;
});
afterAll(async () => {
  await Promise.all(extraPools.map((pool) => pool.end()));
  await schema?.drop();
});

function otherPool(poolMax: number): Sql {
  const pool = createSql({ url: testServices().databaseUrl, schema: schema.schema, poolMax });
  extraPools.push(pool);
  return pool;
}

const uniqueEmail = () => `${crypto.randomUUID()}@example.com`;
let nextAddress = 1;
/** A documentation-range address no other test uses. */
const uniqueAddress = () => {
  const n = nextAddress++;
  return `2001:db8::${n.toString(16)}`;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function failTimes(
  limiter: SignInLimiter,
  times: number,
  attempt: () => { email: string; address: string },
) {
  const results: ReserveResult[] = [];
  for (let i = 0; i < times; i++) {
    const result = await limiter.reserve(attempt());
    if (result.allowed) await limiter.failed(result.reservation);
    results.push(result);
  }
  return results;
}

const allowedCount = (results: ReserveResult[]) => results.filter((result) => result.allowed).length;

describe("per account", () => {
  it("refuses the 11th attempt after 10 failures, retrying after about the window", async () => {
    const limiter = createSignInLimiter(sql, { accountLimit: 10, addressLimit: 1000, windowSeconds: 900 });
    const email = uniqueEmail();
    const results = await failTimes(limiter, 11, () => ({ email, address: uniqueAddress() }));
    expect(results.slice(0, 10).every((result) => result.allowed)).toBe(true);
    const refused = results[10];
    expect(refused?.allowed).toBe(false);
    if (refused?.allowed !== false) return;
    expect(refused.retryAfterSeconds).toBeGreaterThan(895);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(900);

    const again = await limiter.reserve({ email, address: uniqueAddress() });
    expect(again.allowed).toBe(false);
  });

  it("refuses for one window, then counts afresh from one", async () => {
    const limiter = createSignInLimiter(sql, { accountLimit: 3, addressLimit: 1000, windowSeconds: 2 });
    const email = uniqueEmail();
    const first = await failTimes(limiter, 5, () => ({ email, address: uniqueAddress() }));
    expect(first.map((result) => result.allowed)).toEqual([true, true, true, false, false]);
    // Refusals do not extend the refusal: it ends one window after it began.
    await sleep(2100);
    const second = await failTimes(limiter, 4, () => ({ email, address: uniqueAddress() }));
    expect(second.map((result) => result.allowed)).toEqual([true, true, true, false]);
    const [row] = await sql`select failures from sign_in_failures where scope = 'account' and key = ${email}`;
    expect(row?.failures).toBe(4);
  });

  it("starts a new window when the old one has passed without reaching the limit", async () => {
    const limiter = createSignInLimiter(sql, { accountLimit: 3, addressLimit: 1000, windowSeconds: 2 });
    const email = uniqueEmail();
    expect(allowedCount(await failTimes(limiter, 3, () => ({ email, address: uniqueAddress() })))).toBe(3);
    await sleep(2100);
    expect(allowedCount(await failTimes(limiter, 3, () => ({ email, address: uniqueAddress() })))).toBe(3);
  });

  it("clears the account's count on a success", async () => {
    const limiter = createSignInLimiter(sql, { accountLimit: 3, addressLimit: 1000, windowSeconds: 900 });
    const email = uniqueEmail();
    await failTimes(limiter, 2, () => ({ email, address: uniqueAddress() }));
    const right = await limiter.reserve({ email, address: uniqueAddress() });
    expect(right.allowed).toBe(true);
    if (!right.allowed) return;
    await limiter.succeeded(right.reservation);
    expect(await sql`select from sign_in_failures where scope = 'account' and key = ${email}`).toHaveLength(
      0,
    );
    expect(allowedCount(await failTimes(limiter, 4, () => ({ email, address: uniqueAddress() })))).toBe(3);
  });

  it("counts an e-mail address whatever its case and surrounding spaces", async () => {
    const limiter = createSignInLimiter(sql, { accountLimit: 4, addressLimit: 1000, windowSeconds: 900 });
    const email = uniqueEmail();
    const spellings = [email, email.toUpperCase(), ` ${email}`, `${email.toUpperCase()}\t `, email];
    let i = 0;
    const results = await failTimes(limiter, spellings.length, () => ({
      email: spellings[i++] as string,
      address: uniqueAddress(),
    }));
    expect(results.map((result) => result.allowed)).toEqual([true, true, true, true, false]);
    expect(accountKey(` ${email.toUpperCase()} `)).toBe(email);
  });

  it("answers an unknown e-mail address exactly as a known one", async () => {
    const known = uniqueEmail();
    await sql`insert into accounts (email, password_hash) values (${known}, 'not-a-hash')`;
    const limiter = createSignInLimiter(sql, { accountLimit: 2, addressLimit: 1000, windowSeconds: 900 });
    const answers = async (email: string) =>
      (await failTimes(limiter, 4, () => ({ email, address: uniqueAddress() }))).map((result) =>
        result.allowed ? "allowed" : `refused ${Math.round(result.retryAfterSeconds / 10)}`,
      );
    expect(await answers(uniqueEmail())).toEqual(await answers(known));
  });
});

describe("per address", () => {
  it("refuses the 101st attempt from one address, whatever the accounts, and leaves other addresses alone", async () => {
    const limiter = createSignInLimiter(sql, { accountLimit: 10, addressLimit: 100, windowSeconds: 900 });
    const address = uniqueAddress();
    const results = await failTimes(limiter, 101, () => ({ email: uniqueEmail(), address }));
    expect(allowedCount(results.slice(0, 100))).toBe(100);
    expect(results[100]).toMatchObject({ allowed: false });
    expect((await limiter.reserve({ email: uniqueEmail(), address: uniqueAddress() })).allowed).toBe(true);
  });

  it("does not count against the account an attempt the address refused", async () => {
    const limiter = createSignInLimiter(sql, { accountLimit: 2, addressLimit: 1, windowSeconds: 900 });
    const email = uniqueEmail();
    const address = uniqueAddress();
    expect(allowedCount(await failTimes(limiter, 5, () => ({ email, address })))).toBe(1);
    const [row] = await sql`select failures from sign_in_failures where scope = 'account' and key = ${email}`;
    expect(row?.failures).toBe(1);
  });

  it("gives the address its attempt back on a success", async () => {
    const limiter = createSignInLimiter(sql, { accountLimit: 10, addressLimit: 3, windowSeconds: 900 });
    const address = uniqueAddress();
    await failTimes(limiter, 2, () => ({ email: uniqueEmail(), address }));
    const right = await limiter.reserve({ email: uniqueEmail(), address });
    if (!right.allowed) throw new Error("the third attempt was refused");
    await limiter.succeeded(right.reservation);
    const [row] =
      await sql`select failures from sign_in_failures where scope = 'address' and key = ${address}`;
    expect(row?.failures).toBe(2);
  });

  it("keys an IPv4-mapped IPv6 address as the IPv4 address", async () => {
    expect(addressKey("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(addressKey("::FFFF:192.0.2.7")).toBe("192.0.2.7");
    expect(addressKey("2001:DB8::1")).toBe("2001:db8::1");
    const limiter = createSignInLimiter(sql, { accountLimit: 10, addressLimit: 1, windowSeconds: 900 });
    expect((await limiter.reserve({ email: uniqueEmail(), address: "192.0.2.77" })).allowed).toBe(true);
    expect((await limiter.reserve({ email: uniqueEmail(), address: "::ffff:192.0.2.77" })).allowed).toBe(
      false,
    );
  });
});

describe("shared and race-free", () => {
  it("lets exactly the limit through of 50 concurrent wrong passwords for one account", async () => {
    const pool = otherPool(25);
    const limiter = createSignInLimiter(pool, { accountLimit: 10, addressLimit: 1000, windowSeconds: 900 });
    const email = uniqueEmail();
    const results = await Promise.all(
      Array.from({ length: 50 }, () => limiter.reserve({ email, address: uniqueAddress() })),
    );
    expect(allowedCount(results)).toBe(10);
    for (const result of results) {
      if (!result.allowed) expect(result.retryAfterSeconds).toBeGreaterThan(890);
    }
  });

  it("shares counts between replicas (two pools)", async () => {
    const settings = { accountLimit: 4, addressLimit: 1000, windowSeconds: 900 };
    const replicas = [createSignInLimiter(sql, settings), createSignInLimiter(otherPool(2), settings)];
    const email = uniqueEmail();
    let i = 0;
    const results: ReserveResult[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      results.push(await (replicas[i++ % 2] as SignInLimiter).reserve({ email, address: uniqueAddress() }));
    }
    expect(results.map((result) => result.allowed)).toEqual([true, true, true, true, false, false]);
  });
});

describe("settings and retry-after", () => {
  it.each([
    { accountLimit: 0, addressLimit: 100, windowSeconds: 900 },
    { accountLimit: 10, addressLimit: 1.5, windowSeconds: 900 },
    { accountLimit: 10, addressLimit: 100, windowSeconds: -1 },
  ])("refuses %o", (settings) => {
    expect(() => createSignInLimiter(sql, settings)).toThrow(/must be a positive integer/);
  });

  it("rounds retry-after up to whole seconds, at least one", () => {
    expect(retryAfterSeconds(899.2)).toBe(900);
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(-3)).toBe(1);
    expect(retryAfterSeconds(null)).toBe(1);
  });
});
