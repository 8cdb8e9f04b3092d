/**
 * The probe's report (index.ts) in the shape of the registration message. The
 * probe spells self-test results "passed"/"failed"; the protocol says "PASSED"/"FAILED".
 */
import { messageLimits, type ProbeReport, ProbeReportSchema } from "@tjm/protocol";
import type { ProbeReport as HostProbeReport } from "./index.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]+/g;

/** A reason from ffmpeg's stderr as one bounded line, which is what the protocol accepts. */
function oneLine(text: string): string {
  const line = text.replace(CONTROL_CHARACTERS, " ").trim() || "no reason given";
  return line.length > messageLimits.reasonLength
    ? `${line.slice(0, messageLimits.reasonLength - 1)}…`
    : line;
}

export function toProtocolProbe(report: HostProbeReport): ProbeReport {
  return ProbeReportSchema.parse({
    ffmpegVersion: oneLine(report.ffmpegVersion).slice(0, messageLimits.ffmpegVersionLength),
    capabilities: report.capabilities,
    hardwareEncoders: report.hardwareEncoders.map((encoder) =>
      encoder.status === "passed"
        ? { name: encoder.name, status: "PASSED" as const }
        : { name: encoder.name, status: "FAILED" as const, reason: oneLine(encoder.reason) },
    ),
    certification: {
      status: report.certification.status,
      reasons: report.certification.reasons.map(oneLine),
    },
    capacity: Math.min(report.capacity, messageLimits.capacityMax),
  });
}

/** Attempts this Worker runs at once: what the host takes, lowered by WORKER_CAPACITY. */
export function effectiveCapacity(hostCapacity: number, capacityCap: number | undefined): number {
  return capacityCap === undefined ? hostCapacity : Math.min(hostCapacity, capacityCap);
}
