import { ProbeReportSchema } from "@tjm/protocol";
import { describe, expect, it } from "vitest";
import { effectiveCapacity, toProtocolProbe } from "./report.ts";

describe("toProtocolProbe", () => {
  it("spells self-test results as the protocol does", () => {
    const report = toProtocolProbe({
      ffmpegVersion: "5.1.9-0+deb12u1",
      capabilities: ["libx264", "aac", "hwaccel:cuda"],
      hardwareEncoders: [
        { name: "h264_nvenc", status: "failed", reason: "Cannot load libcuda.so.1" },
        { name: "hevc_vaapi", status: "passed" },
      ],
      certification: { status: "READY", reasons: [] },
      capacity: 4,
    });
    expect(report).toEqual({
      ffmpegVersion: "5.1.9-0+deb12u1",
      capabilities: ["libx264", "aac", "hwaccel:cuda"],
      hardwareEncoders: [
        { name: "h264_nvenc", status: "FAILED", reason: "Cannot load libcuda.so.1" },
        { name: "hevc_vaapi", status: "PASSED" },
      ],
      certification: { status: "READY", reasons: [] },
      capacity: 4,
    });
    expect(ProbeReportSchema.safeParse(report).success).toBe(true);
  });

  it("makes reasons single bounded lines, which is all the protocol accepts", () => {
    const report = toProtocolProbe({
      ffmpegVersion: "n7.1",
      capabilities: [],
      hardwareEncoders: [
        { name: "h264_qsv", status: "failed", reason: `line one\nline two\t${"x".repeat(600)}` },
      ],
      certification: { status: "DEGRADED", reasons: ["\n"] },
      capacity: 1,
    });
    const failed = report.hardwareEncoders[0];
    expect(failed?.status === "FAILED" && failed.reason).toMatch(/^line one line two x+…$/);
    expect(failed?.status === "FAILED" && failed.reason.length).toBe(512);
    expect(report.certification.reasons).toEqual(["no reason given"]);
  });
});

describe("effectiveCapacity", () => {
  it("is the host's capacity lowered by WORKER_CAPACITY, never raised", () => {
    expect(effectiveCapacity(8, undefined)).toBe(8);
    expect(effectiveCapacity(8, 3)).toBe(3);
    expect(effectiveCapacity(2, 5)).toBe(2);
  });
});
