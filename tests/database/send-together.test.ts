/**
 * sendTogether, which the scheduler sends its reads and its writes with: a group of statements
 * goes out in order, all before the first answer comes back (one round trip), and a statement
 * that fails rejects the group with its own error.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createSql, type Sql, sendTogether } from "../../manager/src/platform/db.ts";
import { testServices } from "../harness/manager.ts";

const schema = `${inject("schemaPrefix")}pipelined_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
/** Everything the pool sends, in order, and when each group's answers came. */
const events: string[] = [];
/**
 * The event loop's turn each statement was handed to the connection in: an answer from the
 * server needs a later turn, so statements handed over in one turn went out without waiting
 * for one another.
 */
const sentInTurn: number[] = [];
let turn = 0;
let counting = true;
function countTurns(): void {
  turn++;
  if (counting) setImmediate(countTurns);
}
let sql: Sql;
let observer: Sql;

beforeAll(async () => {
  observer = createSql({ url: testServices().databaseUrl, schema, poolMax: 1 });
  await observer`create schema ${observer(schema)}`;
  await observer`create table ${observer(schema)}.notes (id int primary key)`;
  sql = createSql({
    url: testServices().databaseUrl,
    schema,
    poolMax: 1,
    onStatement: (statement) => {
      events.push(`sent ${statement.trim().split(/\s+/).slice(0, 3).join(" ")}`);
      sentInTurn.push(turn);
    },
  });
  // Connected, its types read: the first test sees only its own statements.
  await sql`select 1`;
});

afterAll(async () => {
  counting = false;
  await sql?.end();
  await observer`drop schema if exists ${observer(schema)} cascade`;
  await observer.end();
});

async function notes(): Promise<number[]> {
  const rows = await observer<{ id: number }[]>`select id from notes order by id`;
  return rows.map((row) => row.id);
}

describe("sendTogether", () => {
  it("sends a transaction's statements in order, each group in one turn, before any answer", async () => {
    await observer`truncate notes`;
    events.length = 0;
    sentInTurn.length = 0;
    countTurns();
    const seen = await sql.begin(async (tx) => {
      const [inserted, [count]] = await sendTogether(
        tx`insert into notes (id) values (1) returning id`,
        tx<{ n: number }[]>`select count(*)::int as n from notes`,
      );
      events.push("first group answered");
      await sendTogether(tx`insert into notes (id) values (2)`, tx`insert into notes (id) values (3)`);
      events.push("second group answered");
      return { inserted: inserted.length, count: count?.n };
    });
    expect(seen).toEqual({ inserted: 1, count: 1 });
    expect(await notes()).toEqual([1, 2, 3]);
    expect(events).toEqual([
      "sent begin",
      "sent insert into notes",
      "sent select count(*)::int as",
      "first group answered",
      "sent insert into notes",
      "sent insert into notes",
      "second group answered",
      "sent commit",
    ]);
    // Each group went out before any of its answers came back: one round trip each.
    const [begin, insertOne, , insertTwo, , commit] = sentInTurn;
    expect(sentInTurn.slice(1, 3)).toEqual([insertOne, insertOne]);
    expect(sentInTurn.slice(3, 5)).toEqual([insertTwo, insertTwo]);
    expect(begin).toBeLessThan(insertOne as number);
    expect(insertOne).toBeLessThan(insertTwo as number);
    expect(insertTwo).toBeLessThan(commit as number);
  });

  it("rejects with the error of a statement that failed, and the transaction leaves nothing", async () => {
    await observer`truncate notes`;
    const outcome = sql.begin(async (tx) => {
      await sendTogether(tx`insert into notes (id) values (1)`);
      await sendTogether(tx`insert into notes (id) values (2)`, tx`insert into notes (id) values (1)`);
    });
    await expect(outcome).rejects.toMatchObject({ code: "23505" });
    expect(await notes()).toEqual([]);
  });
});
