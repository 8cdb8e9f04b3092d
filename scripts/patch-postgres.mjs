// Runs after `npm ci` / `npm install` (root postinstall). Patches postgres.js 3.4.9, whose
// buffered writes can fire after the connection closed and call socket.write on null: an
// exception from a setImmediate that no caller can catch, so it takes the whole process down
// whenever PostgreSQL drops a connection mid-write (upstream: porsager/postgres #1066, #1154,
// #1208, fix not released). The guard settles the pending queries with CONNECTION_CLOSED
// instead, so callers see an ordinary, catchable error. Idempotent; fails loudly when the
// driver changed so the patch is revisited rather than silently skipped.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Every workspace shares the one hoisted copy.
const root = fileURLToPath(new URL("../node_modules/postgres/", import.meta.url));
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const MARKER = "tjm: guard against a write after close";
const UNPATCHED = "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n";
const PATCHED = `  function nextWrite(fn) {
    if (socket === null) { // ${MARKER}
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options))
      return false
    }
    const x = socket.write(chunk, fn)
`;

if (version !== "3.4.9") {
  throw new Error(
    `scripts/patch-postgres.mjs patches postgres 3.4.9, found ${version}: check whether it is still needed`,
  );
}
for (const file of ["src/connection.js", "cjs/src/connection.js", "cf/src/connection.js"]) {
  const path = join(root, file);
  const source = readFileSync(path, "utf8");
  if (source.includes(MARKER)) continue;
  if (!source.includes(UNPATCHED)) throw new Error(`${path}: nextWrite is not where the patch expects it`);
  writeFileSync(path, source.replace(UNPATCHED, PATCHED));
}
