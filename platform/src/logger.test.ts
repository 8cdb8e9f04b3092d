import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";

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
