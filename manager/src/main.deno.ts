// Deno entrypoint: the same Manager as main.node.ts, served by Deno.serve. It serves no built-in
// provider (oidc-provider needs Node), so it sends no back-channel logouts either: the rows that
// ending sessions queues wait in backchannel_logout_outbox for a Node Manager's sender.
import { connect } from "@nats-io/transport-node";
import { main } from "./runtime.ts";

const encoder = new TextEncoder();

await main({
  name: "deno",
  env: Deno.env.toObject(),
  args: Deno.args,
  connectNats: connect,
  serve: (app, host, port) =>
    new Promise((resolve) => {
      const server = Deno.serve(
        { hostname: host, port, onListen: () => resolve(() => server.shutdown()) },
        app.fetch,
      );
    }),
  onShutdownSignal: (handler) => {
    Deno.addSignalListener("SIGTERM", handler);
    Deno.addSignalListener("SIGINT", handler);
  },
  writeStdout: (line) => Deno.stdout.writeSync(encoder.encode(`${line}\n`)),
  writeStderr: (line) => Deno.stderr.writeSync(encoder.encode(`${line}\n`)),
  exit: (code) => Deno.exit(code),
});
