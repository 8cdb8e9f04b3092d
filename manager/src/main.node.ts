import { serve } from "@hono/node-server";
import { connect } from "@nats-io/transport-node";
import { main } from "./runtime.ts";

await main({
  name: "node",
  env: process.env,
  args: process.argv.slice(2),
  connectNats: connect,
  serve: (app, host, port) =>
    new Promise((resolve) => {
      const server = serve({ fetch: app.fetch, hostname: host, port }, () =>
        resolve(() => new Promise<void>((done) => server.close(() => done()))),
      );
    }),
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
