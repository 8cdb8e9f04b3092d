import { silentLogger } from "@tjm/platform";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { EventEnvelope } from "../outbox/index.ts";
import { EventFanout, type EventSubscriber, KEEP_ALIVE_FRAME } from "./fanout.ts";

const JOB_A = "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d";
const JOB_B = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";

function event(kind: EventEnvelope["kind"], jobId: string): EventEnvelope {
  return { id: `${kind}-${jobId}`, kind, occurredAt: "2026-11-27T10:00:00.000Z", data: { jobId } };
}

function subscriber(filter: { kinds?: string[]; jobId?: string } = {}) {
  const frames: Uint8Array[] = [];
  const subscribed: EventSubscriber = {
    kinds: filter.kinds && new Set(filter.kinds),
    jobId: filter.jobId,
    sink: { write: (frame) => frames.push(frame) },
  };
  return { subscribed, frames };
}

const text = (frame: Uint8Array | undefined) => new TextDecoder().decode(frame);

afterEach(() => {
  vi.useRealTimers();
});

describe("EventFanout", () => {
  it("writes each event only to the subscribers whose kinds and job take it, one frame for all", () => {
    const fanout = new EventFanout(60_000, silentLogger);
    const everything = subscriber();
    const updates = subscriber({ kinds: ["job.updated"] });
    const jobB = subscriber({ jobId: JOB_B });
    for (const { subscribed } of [everything, updates, jobB]) fanout.add(subscribed);

    fanout.publish(event("job.created", JOB_A));
    fanout.publish(event("job.updated", JOB_B));

    expect(everything.frames.map(text)).toEqual([
      expect.stringMatching(/^id: job\.created-.*\nevent: job\.created\ndata: \{.*\}\n\n$/),
      expect.stringMatching(/^id: job\.updated-/),
    ]);
    expect(updates.frames.map(text)).toEqual([expect.stringMatching(/^id: job\.updated-/)]);
    expect(jobB.frames.map(text)).toEqual([expect.stringMatching(/^id: job\.updated-/)]);
    expect(JSON.parse(text(jobB.frames[0]).split("data: ")[1] as string)).toEqual(
      event("job.updated", JOB_B),
    );
    // Serialised once: every subscriber got the same bytes.
    expect(updates.frames[0]).toBe(everything.frames[1]);
    for (const { subscribed } of [everything, updates, jobB]) fanout.delete(subscribed);
  });

  it("writes nothing to a subscriber once deleted, and keeps one keep-alive timer only while any subscribe", () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const fanout = new EventFanout(1000, silentLogger);
    const first = subscriber();
    const second = subscriber({ kinds: ["worker.updated"] });
    fanout.add(first.subscribed);
    fanout.add(second.subscribed);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1000);
    expect(first.frames).toEqual([KEEP_ALIVE_FRAME]);
    expect(second.frames).toEqual([KEEP_ALIVE_FRAME]);

    fanout.delete(first.subscribed);
    fanout.publish(event("job.created", JOB_A));
    expect(first.frames).toHaveLength(1);
    fanout.delete(second.subscribed);
    expect(fanout.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
