import net from "node:net";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { waitFor } from "@tjm/devstack/services";
import { UUID_PATTERN } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { subscribeEvents } from "../harness/sse.ts";

let manager: TestManager;
let projectId: string;

beforeAll(async () => {
  manager = await TestManager.start();
  ({ projectId } = await manager.createProject());
});
afterAll(() => manager?.close());

const subscribe = (query = "") => subscribeEvents(manager, query);

async function submit() {
  const response = await manager.request("/api/v1/operations/jobs", {
    method: "POST",
    json: sampleSubmission(projectId),
  });
  return ((await response.json()) as { id: string }).id;
}

describe("GET /api/v1/operations/events", () => {
  it("streams job.created then job.updated for a submitted and cancelled job, unbuffered", async () => {
    const stream = await subscribe();
    try {
      expect(stream.response.headers.get("content-type")).toContain("text/event-stream");
      expect(stream.response.headers.get("cache-control")).toBe("no-cache");
      expect(stream.response.headers.get("x-accel-buffering")).toBe("no");

      const jobId = await submit();
      await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
      await waitFor("two events", async () => stream.events().length >= 2);

      const [created, updated] = stream
        .events()
        .map((event) => ({ ...event, envelope: JSON.parse(event.data ?? "{}") }));
      expect(created).toMatchObject({
        event: "job.created",
        envelope: { kind: "job.created", data: { jobId, state: "QUEUED" } },
      });
      expect(updated).toMatchObject({
        event: "job.updated",
        envelope: { kind: "job.updated", data: { jobId, from: "QUEUED", to: "CANCELLED" } },
      });
      expect(created?.id).toMatch(UUID_PATTERN);
      expect(updated?.id).toMatch(UUID_PATTERN);
      expect(updated?.id).not.toBe(created?.id);
      expect(created?.envelope.id).toBe(created?.id);
    } finally {
      await stream.close();
    }
  });

  it("filters by kinds and by job", async () => {
    const onlyUpdates = await subscribe("?kinds=job.updated");
    const first = await submit();
    const onlyFirst = await subscribe(`?jobId=${first}`);
    try {
      const second = await submit();
      await manager.request(`/api/v1/operations/jobs/${first}/cancel`, { method: "POST" });
      await manager.request(`/api/v1/operations/jobs/${second}/cancel`, { method: "POST" });
      await waitFor("updates", async () => onlyUpdates.events().length >= 2);
      await waitFor("the first job's update", async () =>
        onlyFirst.events().some((event) => event.event === "job.updated"),
      );
      expect(onlyUpdates.events().every((event) => event.event === "job.updated")).toBe(true);
      // Its job.created may arrive too: the relay publishes it after this subscription opened.
      const jobIds = new Set(onlyFirst.events().map((event) => JSON.parse(event.data ?? "{}").data.jobId));
      expect([...jobIds]).toEqual([first]);
    } finally {
      await onlyUpdates.close();
      await onlyFirst.close();
    }
  });

  it("sends a keep-alive comment every interval, and the request id header like every route", async () => {
    const quick = await TestManager.start({ sseKeepAliveMs: 200 });
    try {
      const stream = await subscribeEvents(quick);
      try {
        expect(stream.response.headers.get("x-request-id")).toBeTruthy();
        await waitFor(
          "three keep-alives",
          async () => stream.comments().filter((c) => c === "keep-alive").length >= 3,
          5000,
          50,
        );
      } finally {
        await stream.close();
      }
    } finally {
      await quick.close();
    }
  });

  it("frames events as HTTP/1.1 chunks, and writes them unframed to an HTTP/1.0 client", async () => {
    const { hostname, port } = new URL(manager.baseUrl);
    const token = await manager.issuer.token();
    const open = async (version: string) => {
      const socket = net.connect({ host: hostname, port: Number(port) });
      socket.write(
        `GET /api/v1/operations/events HTTP/${version}\r\nHost: ${hostname}:${port}\r\n` +
          `Authorization: Bearer ${token}\r\n\r\n`,
      );
      let received = "";
      socket.on("data", (chunk: Buffer) => {
        received += chunk.toString("latin1");
      });
      await waitFor(`the HTTP/${version} stream to open`, async () => received.includes(": connected"));
      return { socket, received: () => received };
    };
    const [http11, http10] = [await open("1.1"), await open("1.0")];
    try {
      const jobId = await submit();
      const body = (text: string) => text.slice(text.indexOf("\r\n\r\n") + 4);
      await waitFor("the job's event on both", async () =>
        [http11, http10].every((stream) => stream.received().includes(jobId)),
      );
      const created = new RegExp(`id: [^\n]+\nevent: job.created\ndata: [^\n]*${jobId}[^\n]*\n\n`);
      expect(body(http11.received())).toMatch(/^d\r\n: connected\n\n\r\n/);
      expect(body(http11.received())).toMatch(new RegExp(`[0-9a-f]+\r\n${created.source}\r\n`));
      expect(body(http10.received())).toMatch(/^: connected\n\n/);
      expect(body(http10.received())).toMatch(created);
      expect(body(http10.received())).not.toContain("\r\n");
    } finally {
      http11.socket.destroy();
      http10.socket.destroy();
    }
  });

  it("disconnects a subscriber that stopped reading once more than 1 MiB waits for it", async () => {
    const { hostname, port } = new URL(manager.baseUrl);
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.write(
      `GET /api/v1/operations/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
        `Authorization: Bearer ${await manager.issuer.token()}\r\n\r\n`,
    );
    let received = "";
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
    });
    try {
      await waitFor("the stream to open", async () => received.includes(": connected"));
      socket.pause();
      const { events } = manager.manager;
      const before = events.subscribers;
      // job.progress is written from memory: enough of it to fill the kernel's buffers and 1 MiB more.
      const padding = "x".repeat(64 * 1024);
      for (let n = 0; n < 1000 && events.subscribers === before; n++) {
        events.publishLocal({
          id: `progress-${n}`,
          kind: "job.progress",
          occurredAt: new Date().toISOString(),
          data: { jobId: crypto.randomUUID(), padding },
        });
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(events.subscribers).toBe(before - 1);
    } finally {
      socket.destroy();
    }
  });

  it("refuses unknown kinds and a malformed job id, and needs an operator token", async () => {
    const bad = await manager.request("/api/v1/operations/events?kinds=job.exploded&jobId=42");
    expect(bad.status).toBe(400);
    expect((await bad.json()).details.map((detail: { path: string }) => detail.path).sort()).toEqual([
      "jobId",
      "kinds.0",
    ]);
    const anonymous = await fetch(`${manager.baseUrl}/api/v1/operations/events`);
    expect(anonymous.status).toBe(401);
  });
});
