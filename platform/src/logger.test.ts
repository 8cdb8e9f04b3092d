import { describe, expect, it } from "vitest";
import { createLogger, withFields } from "./logger.ts";

function capture(level: Parameters<typeof createLogger>[0], base?: Record<string, unknown>) {
  const lines: string[] = [];
  const logger = createLogger(level, (line) => lines.push(line), base);
  return { logger, lines, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe("createLogger", () => {
  it("writes one JSON object per call: time, level, msg, the base fields, then the call's fields", () => {
    const { logger, lines } = capture("debug", { service: "manager" });
    logger.info("job submitted", { jobId: "j1", attempts: 2 });
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] ?? "") as Record<string, unknown>;
    expect(Object.keys(entry)).toEqual(["time", "level", "msg", "service", "jobId", "attempts"]);
    expect(entry).toMatchObject({
      level: "info",
      msg: "job submitted",
      service: "manager",
      jobId: "j1",
      attempts: 2,
    });
    expect(new Date(entry.time as string).toISOString()).toBe(entry.time);
  });

  it("drops calls below its level and keeps the rest", () => {
    const { logger, entries } = capture("warn");
    logger.debug("d");
    logger.info("i");
    logger.warn("w");
    logger.error("e");
    expect(entries().map((entry) => [entry.level, entry.msg])).toEqual([
      ["warn", "w"],
      ["error", "e"],
    ]);
  });

  it("keeps an error's name, message, stack and cause", () => {
    const { logger, entries } = capture("info");
    const cause = new RangeError("socket closed");
    const err = new TypeError("upload failed", { cause });
    logger.error("the upload failed", { err });
    expect(entries()[0]?.err).toEqual({
      name: "TypeError",
      message: "upload failed",
      stack: err.stack,
      cause: { name: "RangeError", message: "socket closed", stack: cause.stack },
    });
  });
});

describe("withFields", () => {
  it("puts its fields on every line, at every level, after the base fields", () => {
    const { logger, entries } = capture("debug", { service: "worker" });
    const attempt = withFields(logger, { jobId: "j1", attemptId: "a1" });
    attempt.debug("probing input");
    attempt.info("encoding", { pid: 42 });
    attempt.warn("upload slow");
    attempt.error("attempt failed");
    expect(entries().map((entry) => Object.keys(entry))).toEqual([
      ["time", "level", "msg", "service", "jobId", "attemptId"],
      ["time", "level", "msg", "service", "jobId", "attemptId", "pid"],
      ["time", "level", "msg", "service", "jobId", "attemptId"],
      ["time", "level", "msg", "service", "jobId", "attemptId"],
    ]);
    for (const entry of entries()) expect(entry).toMatchObject({ jobId: "j1", attemptId: "a1" });
  });

  it("lets a call's own fields win, and keeps the level of the logger underneath", () => {
    const { logger, entries } = capture("info");
    const scoped = withFields(logger, { jobId: "j1", workerId: "w1" });
    scoped.debug("dropped below info");
    scoped.info("attempt completed", { jobId: "j2" });
    expect(entries()).toHaveLength(1);
    expect(entries()[0]).toMatchObject({ msg: "attempt completed", jobId: "j2", workerId: "w1" });
  });

  it("reads its fields at each call: a field set later shows on every later line, also through a nested withFields", () => {
    const { logger, entries } = capture("info");
    const fields: { workerId?: string } = {};
    const agent = withFields(logger, fields);
    const attempt = withFields(agent, { attemptId: "a1" });
    agent.info("registering");
    fields.workerId = "w1";
    agent.info("worker registered");
    attempt.info("encoding");
    expect(entries().map((entry) => [entry.msg, entry.workerId, entry.attemptId])).toEqual([
      ["registering", undefined, undefined],
      ["worker registered", "w1", undefined],
      ["encoding", "w1", "a1"],
    ]);
  });
});
