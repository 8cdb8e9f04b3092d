import { describe, expect, it } from "vitest";
import { type CandidateWorker, capabilitiesNeeded, chooseAssignments, type QueuedJob } from "./scheduler.ts";

const job = (jobId: string, overrides: Partial<QueuedJob> = {}): QueuedJob => ({
  jobId,
  pool: "cpu",
  requiredCapabilities: [],
  outputs: [{ video: { codec: "h264" }, audio: { codec: "aac" } }],
  protocolVersion: 2,
  ...overrides,
});

const worker = (workerId: string, overrides: Partial<CandidateWorker> = {}): CandidateWorker => ({
  workerId,
  pool: "cpu",
  protocolVersion: 2,
  capabilities: ["libx264", "libx265", "libvpx-vp9", "aac", "libopus"],
  capacity: 2,
  load: 0,
  ...overrides,
});

describe("capabilitiesNeeded", () => {
  it("adds each output's encoder on the job's pool to the client's requirements", () => {
    expect(
      capabilitiesNeeded(
        job("j", {
          pool: "nvidia",
          requiredCapabilities: ["scale_cuda"],
          outputs: [{ video: { codec: "h264" } }, { video: { codec: "vp9" }, audio: { codec: "opus" } }],
        }),
      ),
    ).toEqual(["h264_nvenc", "libopus", "libvpx-vp9", "scale_cuda"]);
  });
});

describe("chooseAssignments", () => {
  it("gives jobs in order to the least-loaded Worker, never past its capacity", () => {
    const assignments = chooseAssignments(
      [job("a"), job("b"), job("c"), job("d"), job("e")],
      [worker("w1", { load: 1 }), worker("w2"), worker("w3", { capacity: 1 })],
    );
    expect(assignments).toEqual([
      { jobId: "a", workerId: "w2" },
      { jobId: "b", workerId: "w3" },
      { jobId: "c", workerId: "w1" },
      { jobId: "d", workerId: "w2" },
    ]);
  });

  it.each<[string, Partial<CandidateWorker>]>([
    ["another pool", { pool: "nvidia" }],
    ["another protocol version", { protocolVersion: 1 }],
    ["no free slot", { load: 2 }],
    ["a missing encoder", { capabilities: ["aac"] }],
  ])("skips a Worker with %s", (_, overrides) => {
    expect(chooseAssignments([job("a")], [worker("w", overrides)])).toEqual([]);
  });

  it("lets a job no Worker can run wait without blocking the jobs behind it", () => {
    const assignments = chooseAssignments(
      [job("av1", { outputs: [{ video: { codec: "av1" } }] }), job("h264")],
      [worker("w")],
    );
    expect(assignments).toEqual([{ jobId: "h264", workerId: "w" }]);
  });

  it("honours the client's required capabilities", () => {
    expect(
      chooseAssignments([job("a", { requiredCapabilities: ["filter:subtitles"] })], [worker("w")]),
    ).toEqual([]);
    expect(
      chooseAssignments(
        [job("a", { requiredCapabilities: ["filter:subtitles"] })],
        [worker("w", { capabilities: [...worker("x").capabilities, "filter:subtitles"] })],
      ),
    ).toEqual([{ jobId: "a", workerId: "w" }]);
  });
});
