/**
 * The Worker agent (a real `bun worker-agent/src/main.ts`) reading bad commands: each kind of
 * bad message on its commands subject is terminated (never redelivered) and logged, and the
 * command after it is handled. Then its command stream is deleted under it: once the Manager
 * has created the stream and the agent's consumer again, the agent consumes again.
 *
 * The good command is a cancel of an attempt the agent does not hold, sent through the
 * Manager's outbox like every command; the agent logs it at debug level and changes nothing.
 * decideCommand's own cases (not JSON, not an envelope, another protocol version, repeats)
 * are unit-tested in worker-agent/src/commands.test.ts.
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type AgentProcess, agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { waitFor } from "@tjm/devstack/services";
import {
  type CancelCommand,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  streams,
  subjects,
  workerConsumerName,
} from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendCommand } from "../../manager/src/outbox/index.ts";
import { TestManager } from "../harness/manager.ts";
import { startTestAgent } from "../harness/media-jobs.ts";

const encoder = new TextEncoder();
const json = (value: unknown) => encoder.encode(JSON.stringify(value));

let manager: TestManager;
let nc: NatsConnection;
let agent: AgentProcess;
let workerId: string;
let scratch: Awaited<ReturnType<typeof agentDirs>>;

beforeAll(async () => {
  manager = await TestManager.start({ heartbeatIntervalMs: 300, lostAfterMs: 10_000 });
  nc = await connect({ servers: manager.natsUrl });
  scratch = await agentDirs();
  agent = await startTestAgent(manager, scratch.root, "faults");
  workerId = (await agent.waitForMessage("worker registered")).workerId as string;
  await agent.waitForMessage("consuming commands");
}, 60_000);

afterAll(async () => {
  await killAgents();
  await nc?.close();
  await manager?.close();
  await scratch?.cleanup();
});

const cancel = (attemptId: string): CancelCommand => ({
  type: "cancel",
  protocolVersion: PROTOCOL_VERSION,
  attemptId,
  fencingToken: "7",
});

/** Sends a cancel of an attempt the agent does not hold through the outbox; resolves once the agent handled it. */
async function goodCommandHandled(): Promise<void> {
  const attemptId = crypto.randomUUID();
  await manager.sql.begin((tx) => sendCommand(tx, workerId, cancel(attemptId)));
  await agent.waitForLog(
    (line) => line.msg === "cancel of an attempt this Worker does not hold" && line.attemptId === attemptId,
    15_000,
  );
}

const BAD_COMMANDS: [string, Uint8Array][] = [
  ["bytes that are not UTF-8", Uint8Array.from([0xff, 0xfe, 0x7b, 0xc3, 0x28, 0x80])],
  ["JSON cut short", json({ id: crypto.randomUUID(), kind: "worker.command" }).subarray(0, 20)],
  [
    "valid JSON of the wrong shape",
    json([{ id: crypto.randomUUID(), kind: "worker.command", data: cancel(crypto.randomUUID()) }]),
  ],
  [
    "a good command padded past MAX_MESSAGE_BYTES",
    json({
      id: crypto.randomUUID(),
      kind: "worker.command",
      occurredAt: new Date().toISOString(),
      data: cancel(crypto.randomUUID()),
      padding: "x".repeat(MAX_MESSAGE_BYTES),
    }),
  ],
];

describe("bad commands", () => {
  it.each(BAD_COMMANDS)("%s is terminated and logged; the next command is handled", async (_, bad) => {
    const ack = await jetstream(nc).publish(subjects.workerCommands(manager.subjectPrefix, workerId), bad);
    await goodCommandHandled();

    const dropped = agent.logs.filter((line) => line.msg === "dropping a command that cannot be read");
    expect(dropped.map((line) => line.streamSequence)).toContain(ack.seq);
    // Terminated, not left unacknowledged to come back after the ack wait.
    const jsm = await jetstreamManager(nc);
    const consumerInfo = () =>
      jsm.consumers.info(streams(manager.subjectPrefix).commands.name, workerConsumerName(workerId));
    await waitFor("the consumer to settle", async () => {
      const info = await consumerInfo();
      return info.num_pending === 0 && info.num_ack_pending === 0;
    });
    expect((await consumerInfo()).num_redelivered).toBe(0);
    expect(agent.running).toBe(true);
  });
});

describe("its command stream deleted", () => {
  it("the agent consumes again once the Manager re-created the stream and its consumer", async () => {
    const consuming = agent.logs.filter((line) => line.msg === "consuming commands").length;
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(streams(manager.subjectPrefix).commands.name);
    const deletedAt = Date.now();

    await waitFor(
      "the agent consuming again",
      async () => agent.logs.filter((line) => line.msg === "consuming commands").length > consuming,
      15_000,
      50,
    );
    await goodCommandHandled();
    // Well before the client library would have looked for the consumer again by itself (30 s).
    expect(Date.now() - deletedAt).toBeLessThan(10_000);
    expect(agent.running).toBe(true);
  });
});
