/**
 * A child process of the execution benches: devstack's s3rver (devstack/src/s3rver.ts) with the
 * buckets named in S3_BUCKETS, in a process of its own so that its CPU is measured apart from
 * the bench's and its request handling never delays the bench's clock readings.
 *
 * Prints one JSON line, {"endpoint":…,"port":…}, once it serves; stops (and removes its
 * directory) when stdin closes or on SIGTERM.
 */
import { startS3 } from "@tjm/devstack/s3rver";

export interface S3ServerReady {
  endpoint: string;
  port: number;
}

const buckets = (process.env.S3_BUCKETS ?? "")
  .split(",")
  .map((name) => name.trim())
  .filter((name) => name !== "");
const server = await startS3({ buckets });
let stopping: Promise<void> | undefined;
const stop = () => {
  stopping ??= server.stop().finally(() => process.exit(0));
  return stopping;
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
process.stdin.on("end", () => void stop());
process.stdin.resume();
const ready: S3ServerReady = { endpoint: server.endpoint, port: server.port };
process.stdout.write(`${JSON.stringify(ready)}\n`);
