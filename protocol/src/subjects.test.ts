import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_SUBJECT_PREFIX,
  parseWorkerSubject,
  streams,
  subjects,
  WORKER_CHANNELS,
  workerConsumerName,
  workerInboxPrefix,
} from "./subjects.ts";

const WORKER = "3f2b8c1e-7d4a-4e59-9b2c-6a1d0e8f7c35";
const TEST_PREFIX = "t_ab12cd34";

describe("subject builders", () => {
  it("name a Worker's four subjects under the prefix", () => {
    expect(subjects.workerHeartbeat("tjm", WORKER)).toBe(`tjm.workers.${WORKER}.heartbeat`);
    expect(subjects.workerProgress("tjm", WORKER)).toBe(`tjm.workers.${WORKER}.progress`);
    expect(subjects.workerCommands("tjm", WORKER)).toBe(`tjm.workers.${WORKER}.commands`);
    expect(subjects.workerReports(TEST_PREFIX, WORKER)).toBe(`${TEST_PREFIX}.workers.${WORKER}.reports`);
  });

  it("name an event kind, dots included, under <prefix>.events", () => {
    expect(subjects.event("tjm", "job.created")).toBe("tjm.events.job.created");
    expect(subjects.event(TEST_PREFIX, "worker.registered")).toBe(`${TEST_PREFIX}.events.worker.registered`);
  });

  it("give the wildcards the Manager subscribes with", () => {
    expect(subjects.allWorkerHeartbeats("tjm")).toBe("tjm.workers.*.heartbeat");
    expect(subjects.allWorkerProgress("tjm")).toBe("tjm.workers.*.progress");
    expect(subjects.allWorkerCommands("tjm")).toBe("tjm.workers.*.commands");
    expect(subjects.allWorkerReports("tjm")).toBe("tjm.workers.*.reports");
    expect(subjects.allEvents("tjm")).toBe("tjm.events.>");
  });

  it("default to the tjm prefix", () => {
    expect(DEFAULT_SUBJECT_PREFIX).toBe("tjm");
  });
});

describe("streams", () => {
  it("are TJM_COMMANDS, TJM_REPORTS and TJM_EVENTS for the default prefix, each with its subjects", () => {
    expect(streams("tjm")).toEqual({
      commands: { name: "TJM_COMMANDS", subjects: ["tjm.workers.*.commands"] },
      reports: { name: "TJM_REPORTS", subjects: ["tjm.workers.*.reports"] },
      events: { name: "TJM_EVENTS", subjects: ["tjm.events.>"] },
    });
  });

  it("carry the upper-cased prefix, so a test run's streams are its own", () => {
    expect(streams(TEST_PREFIX).commands.name).toBe("T_AB12CD34_COMMANDS");
    expect(streams("run-7").events.name).toBe("RUN-7_EVENTS");
  });

  it("differ for any two different prefixes", () => {
    const prefix = fc.stringMatching(/^[a-z][a-z0-9_-]{0,31}$/);
    fc.assert(
      fc.property(prefix, prefix, (a, b) => {
        fc.pre(a !== b);
        const [ours, theirs] = [streams(a), streams(b)];
        for (const key of ["commands", "reports", "events"] as const)
          expect(ours[key].name).not.toBe(theirs[key].name);
      }),
    );
  });
});

describe("consumer and inbox names", () => {
  it("a Worker's durable consumer is worker-<workerId>", () => {
    expect(workerConsumerName(WORKER)).toBe(`worker-${WORKER}`);
  });

  it("a Worker's inbox prefix holds the prefix and its id", () => {
    expect(workerInboxPrefix("tjm", WORKER)).toBe(`_INBOX.tjm.${WORKER}`);
  });
});

describe("validation", () => {
  it.each([
    ["empty", ""],
    ["a dot", "tjm.test"],
    ["a space", "tjm test"],
    ["a star", "*"],
    ["a greater-than sign", ">"],
    ["a slash", "tjm/x"],
    ["uppercase", "TJM"],
    ["a leading digit", "1tjm"],
    ["33 characters", `t${"x".repeat(32)}`],
  ])("a prefix with %s throws", (_, prefix) => {
    expect(() => subjects.workerHeartbeat(prefix, WORKER)).toThrow(/subject prefix .* is invalid/);
    expect(() => subjects.allEvents(prefix)).toThrow(/subject prefix/);
    expect(() => streams(prefix)).toThrow(/subject prefix/);
    expect(() => workerInboxPrefix(prefix, WORKER)).toThrow(/subject prefix/);
  });

  it.each([
    ["not a UUID", "worker-1"],
    ["uppercase", WORKER.toUpperCase()],
    ["a wildcard", "*"],
    ["a dot", `${WORKER}.x`],
    ["empty", ""],
  ])("a worker id that is %s throws", (_, workerId) => {
    expect(() => subjects.workerCommands("tjm", workerId)).toThrow(/is not a lowercase UUID/);
    expect(() => workerConsumerName(workerId)).toThrow(/is not a lowercase UUID/);
    expect(() => workerInboxPrefix("tjm", workerId)).toThrow(/is not a lowercase UUID/);
  });

  it.each([
    ["empty", ""],
    ["uppercase", "Job.created"],
    ["an empty token", "job..created"],
    ["a leading dot", ".job"],
    ["a trailing dot", "job."],
    ["a star", "job.*"],
    ["a greater-than sign", "job.>"],
    ["a space", "job created"],
    ["65 characters", `j${"x".repeat(64)}`],
  ])("an event kind with %s throws", (_, kind) => {
    expect(() => subjects.event("tjm", kind)).toThrow(/event kind .* is invalid/);
  });

  it("an error quotes at most 80 characters of the bad value", () => {
    expect(() => subjects.workerHeartbeat("tjm", "x".repeat(10_000))).toThrow(/^worker id "x{80}…" is/);
  });
});

describe("parseWorkerSubject", () => {
  it.each(WORKER_CHANNELS)("reads the Worker and channel back from a %s subject", (channel) => {
    expect(parseWorkerSubject("tjm", `tjm.workers.${WORKER}.${channel}`)).toEqual({
      workerId: WORKER,
      channel,
    });
  });

  it.each([
    ["another prefix", `other.workers.${WORKER}.heartbeat`],
    ["an unknown channel", `tjm.workers.${WORKER}.status`],
    ["an id that is not a lowercase UUID", `tjm.workers.${WORKER.toUpperCase()}.heartbeat`],
    ["an extra token", `tjm.workers.${WORKER}.heartbeat.x`],
    ["a missing token", `tjm.workers.${WORKER}`],
    ["an event subject", "tjm.events.job.created"],
  ])("answers undefined for %s", (_, subject) => {
    expect(parseWorkerSubject("tjm", subject)).toBeUndefined();
  });

  it("throws on an invalid prefix, like the builders", () => {
    expect(() => parseWorkerSubject("tjm.x", `tjm.workers.${WORKER}.heartbeat`)).toThrow(/subject prefix/);
  });
});
