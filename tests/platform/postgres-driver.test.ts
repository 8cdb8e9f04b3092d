import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql } from "../../manager/src/platform/db.ts";
import { testServices } from "../harness/manager.ts";
import { TcpProxy } from "../harness/tcp-proxy.ts";

const driver = new URL("../../node_modules/postgres/", import.meta.url);

describe("the PostgreSQL driver (postgres.js 3.4.9, patched by scripts/patch-postgres.mjs)", () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    const target = new URL(testServices().databaseUrl);
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
  });
  afterAll(() => proxy?.close());

  it("carries the write-after-close guard in every build", () => {
    for (const file of ["src/connection.js", "cjs/src/connection.js", "cf/src/connection.js"]) {
      expect(readFileSync(new URL(file, driver), "utf8")).toContain("tjm: guard against a write after close");
    }
  });

  it("rejects queries whose connection is cut mid-flight instead of crashing the process", async () => {
    const url = new URL(testServices().databaseUrl);
    url.port = String(proxy.port);
    const sql = createSql({
      url: url.toString(),
      schema: "public",
      poolMax: 4,
      applicationName: "tjm-driver-test",
    });
    const uncaught: unknown[] = [];
    const record = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", record);
    let succeeded = 0;
    let rejected = 0;
    try {
      const until = Date.now() + 2000;
      const load = Array.from({ length: 16 }, async () => {
        while (Date.now() < until) {
          await sql`select pg_sleep(0.001)`.then(
            () => succeeded++,
            () => rejected++,
          );
        }
      });
      const chaos = (async () => {
        while (Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 100));
          await proxy.cut();
          await new Promise((resolve) => setTimeout(resolve, 20));
          await proxy.restore();
        }
      })();
      await Promise.all([...load, chaos]);
    } finally {
      process.off("uncaughtException", record);
      await sql.end({ timeout: 1 });
    }
    expect(uncaught).toEqual([]);
    expect(succeeded).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
  }, 30_000);
});
