import { describe, expect, it } from "vitest";
import { type JobFacts, judge, stagedBy, tally } from "./checker.ts";

const JOB = "11111111-1111-4111-8111-111111111111";
const FIRST = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa";
const SECOND = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb";
const staged = (attemptId: string) => `/media-out/.tjm-staging/${JOB}/${attemptId}/tiny`;

/** A job whose first attempt was lost and whose second completed and was promoted once. */
function recovered(): JobFacts {
  return {
    jobId: JOB,
    state: "COMPLETED",
    currentAttemptId: SECOND,
    attempts: [
      { id: FIRST, state: "FAILED" },
      { id: SECOND, state: "SUCCEEDED" },
    ],
    destinations: [
      { path: "/media-out/0/tiny.mp4", writes: [{ copySource: staged(SECOND) }] },
      { path: "/media-out/0/manifest.json", writes: [{ copySource: undefined }] },
    ],
    executions: [
      { attemptId: FIRST, encoded: 1, completed: 0 },
      { attemptId: SECOND, encoded: 1, completed: 1 },
    ],
  };
}

describe("judge", () => {
  it("finds a job completed once by its current attempt ok", () => {
    expect(judge(recovered())).toMatchObject({ verdict: "ok" });
  });

  it("reads the attempt out of a staging key", () => {
    expect(stagedBy(staged(SECOND))).toBe(SECOND);
    expect(stagedBy(`media-out/.tjm-staging/${JOB}/${FIRST}/web`)).toBe(FIRST);
    expect(stagedBy("/media-in/tiny.mp4")).toBeUndefined();
  });

  it("calls a success of a superseded attempt a stale write accepted", () => {
    const job = recovered();
    job.attempts = [
      { id: FIRST, state: "SUCCEEDED" },
      { id: SECOND, state: "RUNNING" },
    ];
    job.state = "RUNNING";
    expect(judge(job)).toMatchObject({ verdict: "stale-write-accepted" });
  });

  it("calls a destination promoted from an attempt that did not succeed a stale write accepted", () => {
    const job = recovered();
    job.destinations[0] = { path: "/media-out/0/tiny.mp4", writes: [{ copySource: staged(FIRST) }] };
    expect(judge(job)).toMatchObject({
      verdict: "stale-write-accepted",
      reason: expect.stringContaining(FIRST),
    });
  });

  it("calls two successes, writes from two sources or a second run of one attempt a duplicate", () => {
    const twoSuccesses = recovered();
    twoSuccesses.attempts = [
      { id: FIRST, state: "SUCCEEDED" },
      { id: SECOND, state: "SUCCEEDED" },
    ];
    twoSuccesses.currentAttemptId = SECOND;
    // The first success is also not current: stale comes first.
    expect(judge(twoSuccesses).verdict).toBe("stale-write-accepted");

    const writtenFromTwo = recovered();
    writtenFromTwo.destinations[0] = {
      path: "/media-out/0/tiny.mp4",
      writes: [{ copySource: staged(SECOND) }, { copySource: "/media-out/elsewhere.mp4" }],
    };
    expect(judge(writtenFromTwo)).toMatchObject({
      verdict: "duplicate-output",
      reason: expect.stringContaining("/media-out/elsewhere.mp4"),
    });

    const encodedTwice = recovered();
    encodedTwice.executions[1] = { attemptId: SECOND, encoded: 2, completed: 1 };
    expect(judge(encodedTwice)).toMatchObject({ verdict: "duplicate-output" });
  });

  it("calls an unknown job, a failed one or a completed one without its output lost", () => {
    expect(judge({ ...recovered(), state: undefined })).toMatchObject({ verdict: "lost" });
    expect(judge({ ...recovered(), state: "FAILED" })).toMatchObject({
      verdict: "lost",
      reason: "the job ended FAILED (attempts: FAILED, SUCCEEDED)",
    });
    const unwritten = recovered();
    unwritten.destinations[0] = { path: "/media-out/0/tiny.mp4", writes: [] };
    expect(judge(unwritten)).toMatchObject({ verdict: "lost", reason: expect.stringContaining("tiny.mp4") });
  });

  it("calls a job whose fault must not cost an attempt lost when it completed on another", () => {
    const job: JobFacts = { ...recovered(), keepsItsAttempt: true };
    job.attempts = [
      { id: FIRST, state: "FAILED", failureCode: "STORAGE_UNAVAILABLE" },
      { id: SECOND, state: "SUCCEEDED" },
    ];
    expect(judge(job)).toMatchObject({
      verdict: "lost",
      reason: "its encode was lost: it took 2 attempts (STORAGE_UNAVAILABLE, SUCCEEDED)",
    });
    job.attempts = [{ id: SECOND, state: "SUCCEEDED" }];
    expect(judge(job)).toMatchObject({ verdict: "ok" });
  });

  it("calls a job that is not terminal stuck", () => {
    const job = recovered();
    job.state = "WAITING_FOR_STORAGE";
    job.attempts[1] = { id: SECOND, state: "WAITING_FOR_STORAGE" };
    job.destinations = job.destinations.map((destination) => ({ ...destination, writes: [] }));
    expect(judge(job)).toMatchObject({ verdict: "stuck", reason: "still WAITING_FOR_STORAGE" });
  });

  it("calls a job still committing stuck, not stale: its rows were read before its promotion was logged", () => {
    const job = recovered();
    job.state = "UPLOADING";
    job.attempts[1] = { id: SECOND, state: "UPLOADING" };
    expect(judge(job)).toMatchObject({ verdict: "stuck", reason: "still UPLOADING" });
  });

  it("counts a destination copied again from the same staged object as a rewrite, not a duplicate", () => {
    const job = recovered();
    job.destinations[0] = {
      path: "/media-out/0/tiny.mp4",
      writes: [{ copySource: staged(SECOND) }, { copySource: staged(SECOND) }],
    };
    job.destinations[1] = {
      path: "/media-out/0/manifest.json",
      writes: [{ copySource: undefined }, { copySource: undefined }],
    };
    expect(judge(job)).toMatchObject({ verdict: "ok", rewrites: 2 });
  });

  it("under a multipart commit, judges a completed upload by the attempt whose accepted report named it", () => {
    const committed = (uploadId: string): JobFacts => {
      const job = recovered();
      job.attempts = [
        { id: FIRST, state: "FAILED", uploadIds: [] },
        { id: SECOND, state: "SUCCEEDED", uploadIds: ["winner"] },
      ];
      job.destinations[0] = { path: "/media-out/0/tiny.mp4", writes: [{ copySource: undefined, uploadId }] };
      return job;
    };
    expect(judge(committed("winner"))).toMatchObject({ verdict: "ok", rewrites: 0 });
    expect(judge(committed("zombie"))).toMatchObject({
      verdict: "stale-write-accepted",
      reason:
        "/media-out/0/tiny.mp4 was promoted from attempt an upload no accepted report named (zombie), which did not succeed",
    });
    const twice = committed("winner");
    twice.destinations[0]?.writes.push({ copySource: undefined, uploadId: "winner" });
    expect(judge(twice)).toMatchObject({ verdict: "ok", rewrites: 1 });
  });

  it("calls a completed job whose object differs from what its attempt reported a corrupt output", () => {
    const read = (stored: string | null): JobFacts => {
      const job = recovered();
      job.attempts[1] = {
        id: SECOND,
        state: "SUCCEEDED",
        outputs: [{ path: "/media-out/0/tiny.mp4", sha256: "a".repeat(64) }],
      };
      job.destinations[0] = {
        path: "/media-out/0/tiny.mp4",
        writes: [{ copySource: staged(SECOND) }],
        sha256: stored,
      };
      return job;
    };
    expect(judge(read("a".repeat(64)))).toMatchObject({ verdict: "ok" });
    expect(judge(read("b".repeat(64)))).toMatchObject({
      verdict: "corrupt-output",
      reason: `/media-out/0/tiny.mp4 holds ${"b".repeat(64)}, not the reported output ${"a".repeat(64)}`,
    });
    expect(judge(read(null))).toMatchObject({
      verdict: "corrupt-output",
      reason: expect.stringContaining("holds nothing"),
    });
    // Objects not read back: nothing to compare.
    const unread = read("b".repeat(64));
    delete unread.destinations[0]?.sha256;
    expect(judge(unread)).toMatchObject({ verdict: "ok" });
  });

  it("tallies every verdict, 0 included", () => {
    expect(tally([judge(recovered()), judge({ ...recovered(), state: "QUEUED" })])).toEqual({
      ok: 1,
      lost: 0,
      stuck: 1,
      "duplicate-output": 0,
      "stale-write-accepted": 0,
      "corrupt-output": 0,
    });
  });
});
