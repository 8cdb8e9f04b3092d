/**
 * The nats-init one-shot of compose.yaml: `node deploy/nats/init.ts KEYS_DIR SERVER_DIR MANAGER_DIR`.
 * First start: makes the operator, account, signing and Manager keys into KEYS_DIR; every start:
 * writes the servers' trust into SERVER_DIR and the Manager's .creds and account settings into
 * MANAGER_DIR (see trust.ts). Prints one JSON line; never prints a seed.
 */
import { initTrust } from "./trust.ts";

const [keys, server, manager, ...extra] = process.argv.slice(2);
if (keys === undefined || server === undefined || manager === undefined || extra.length > 0) {
  process.stderr.write("usage: node deploy/nats/init.ts KEYS_DIR SERVER_DIR MANAGER_DIR\n");
  process.exit(2);
}
const result = await initTrust({ keys, server, manager });
process.stdout.write(`${JSON.stringify({ msg: "nats trust written", ...result })}\n`);
