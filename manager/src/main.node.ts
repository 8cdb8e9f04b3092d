import { createServer } from "node:http";
import { main } from "./runtime.ts";

// NATS, the HTTP listener and the provider (oidc-provider, Koa) are imported when the Manager
// serves, not for a command such as `accounts create`, which needs none of them.
await main({
  name: "node",
  env: process.env,
  args: process.argv.slice(2),
  connectNats: async (options) => (await import("@nats-io/transport-node")).connect(options),
  serve: async (app, host, port, provider) => {
    const { nodeListener } = await import("./provider/node-listener.ts");
    return new Promise((resolve) => {
      const server = createServer(nodeListener(app, provider));
      server.listen(port, host, () => resolve(() => new Promise<void>((done) => server.close(() => done()))));
    });
  },
  startProvider: async (options) => (await import("./provider/index.ts")).startProviderMount(options),
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
