import { spawn } from "node:child_process";
import { startPrivatePostgres } from "../harness/services.ts";

const pg = await startPrivatePostgres();
const rt = process.argv[2] ?? "deno";
const cmd =
  rt === "deno"
    ? ["node_modules/.bin/deno", ["run", "-A", "tests/database/_repro_dbg.ts", "outage"]]
    : rt === "bun"
      ? ["node_modules/.bin/bun", ["tests/database/_repro_dbg.ts", "outage"]]
      : ["node_modules/.bin/node", ["tests/database/_repro_dbg.ts", "outage"]];
const child = spawn(cmd[0] as string, cmd[1] as string[], {
  env: { ...process.env, DATABASE_URL: pg.url, NO_COLOR: "1" },
});
let out = "";
child.stdout.on("data", (c) => {
  out += c;
  process.stdout.write(c);
});
child.stderr.on("data", (c) => process.stderr.write(c));
const count = (l: string) => out.split("\n").filter((x) => x === l).length;
const until = async (l: string, n: number) => {
  while (count(l) < n) await new Promise((r) => setTimeout(r, 20));
};
await until("up", 1);
for (let r = 1; r <= 3; r++) {
  await pg.stop();
  await until("down", r);
  await pg.start();
  await until("up", r + 1);
}
child.stdin.write("finish\n");
await new Promise((r) => child.once("close", r));
await pg.dispose();
