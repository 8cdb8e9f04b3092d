import { createServer } from "node:http";
import { connect } from "@nats-io/transport-node";
import { startProviderMount } from "./provider/index.ts";
import { nodeListener } from "./provider/node-listener.ts";
import { main } from "./runtime.ts";

await main({
  name: "node",
  env: process.env,
  args: process.argv.slice(2),
  connectNats: connect,
  serve: (app, host, port, provider) =>
    new Promise((resolve) => {
      const server = createServer(nodeListener(app, provider));
      server.listen(port, host, () => resolve(() => new Promise<void>((done) => server.close(() => done()))));
    }),
  startProvider: startProviderMount,
  onShutdownSignal: (handler) => {
    process.once("SIGTERM", handler);
    process.once("SIGINT", handler);
  },
  writeStdout: (line) => process.stdout.write(`${line}\n`),
  writeStderr: (line) => process.stderr.write(`${line}\n`),
  exit: (code) => {
    process.exitCode = code;
    process.exit(code);
  },
});
