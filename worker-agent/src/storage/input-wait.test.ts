import { StorageFailedError, StorageUnavailableError } from "@tjm/storage";
import { describe, expect, it } from "vitest";
import { InputWait, type InputWaitEnd, InputWaitExpiredError, type InputWaitState } from "./input-wait.ts";

/** A clock whose sleeps pass at once and move time on by what they slept. */
function fakeClock() {
  let now = Date.parse("2026-12-01T10:00:00.000Z");
  const sleeps: number[] = [];
  return {
    sleeps,
    advance: (ms: number) => {
      now += ms;
    },
    clock: {
      now: () => now,
      random: () => 1,
      sleep: async (ms: number, signal: AbortSignal) => {
        signal.throwIfAborted();
        sleeps.push(ms);
        now += ms;
      },
    },
  };
}

const unavailable = (message = "connect ECONNREFUSED 127.0.0.1:9000") =>
  new StorageUnavailableError("stream", "s3://media-in/clip.mp4", 5, new Error(message));

function wait(options: { limitMs?: number; signal?: AbortSignal; updateEveryMs?: number } = {}) {
  const time = fakeClock();
  const changes: [InputWaitState | undefined, InputWaitEnd | undefined][] = [];
  const inputWait = new InputWait({
    limitMs: options.limitMs ?? 60_000,
    pauseMs: 8_000,
    signal: options.signal ?? new AbortController().signal,
    onChange: (state, ended) => changes.push([state, ended]),
    ...(options.updateEveryMs !== undefined ? { updateEveryMs: options.updateEveryMs } : {}),
    clock: time.clock,
  });
  return { inputWait, changes, time };
}

/** A read that fails with `failures` errors in turn, then answers "bytes". */
function readFailing(...failures: Error[]) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    read: async () => {
      const failure = failures[calls++];
      if (failure) throw failure;
      return "bytes";
    },
  };
}

describe("an input wait", () => {
  it("passes a read that succeeds at once and reports nothing", async () => {
    const { inputWait, changes } = wait();
    await expect(inputWait.run(readFailing().read)).resolves.toBe("bytes");
    expect(changes).toEqual([]);
  });

  it("waits out spent retry budgets with growing pauses, then reports the start and the end once", async () => {
    const { inputWait, changes, time } = wait();
    const read = readFailing(unavailable(), unavailable(), unavailable(), unavailable(), unavailable());
    await expect(inputWait.run(read.read)).resolves.toBe("bytes");
    expect(read.calls).toBe(6);
    expect(time.sleeps).toEqual([1_000, 2_000, 4_000, 8_000, 8_000]);
    expect(changes).toEqual([
      [
        {
          since: new Date("2026-12-01T10:00:00.000Z"),
          lastError:
            "stream s3://media-in/clip.mp4: storage unavailable after 5 attempt(s): Error: connect ECONNREFUSED 127.0.0.1:9000",
        },
        undefined,
      ],
      [undefined, "answered"],
    ]);
  });

  it("throws any other error at once, and ends its part in the wait", async () => {
    const { inputWait, changes } = wait();
    const refused = new StorageFailedError("stream", "s3://media-in/clip.mp4", new Error("412"));
    await expect(inputWait.run(readFailing(unavailable(), refused).read)).rejects.toBe(refused);
    expect(changes.map(([state, ended]) => [state === undefined, ended])).toEqual([
      [false, undefined],
      [true, "answered"],
    ]);
  });

  it("passes on a changed last error at most once per updateEveryMs", async () => {
    const { inputWait, changes } = wait({ updateEveryMs: 2_500 });
    const read = readFailing(unavailable("A"), unavailable("B"), unavailable("C"), unavailable("C"));
    await inputWait.run(read.read);
    // A at 0; B at 1 s is too soon; C at 3 s is passed on; the second C changes nothing.
    expect(changes.map(([state]) => state?.lastError.slice(-1))).toEqual(["A", "C", undefined]);
  });

  it("gives up once the outage has lasted the limit, and no later read waits", async () => {
    const { inputWait, changes, time } = wait({ limitMs: 10_000 });
    const failing = async () => {
      time.advance(500);
      throw unavailable();
    };
    const error = await inputWait.run(failing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputWaitExpiredError);
    expect((error as Error).message).toMatch(
      /^storage stayed unavailable for 1\d s, the longest an attempt waits for its input \(WORKER_INPUT_WAIT_MAX_MS\); last error: stream s3:/,
    );
    expect(changes.at(-1)).toEqual([undefined, "expired"]);

    const later = readFailing(unavailable());
    await expect(inputWait.run(later.read)).rejects.toBeInstanceOf(InputWaitExpiredError);
    expect(later.calls).toBe(1);
  });

  it("shares one wait between reads that wait together: it starts with the first and ends at the first answer", async () => {
    const { inputWait, changes } = wait();
    let releaseSecond: () => void = () => {};
    const secondMayAnswer = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    let secondCalls = 0;
    const second = inputWait.run(async () => {
      if (secondCalls++ === 0) throw unavailable();
      await secondMayAnswer;
      return "second";
    });
    await inputWait.run(readFailing(unavailable()).read);
    // The store answered the first read: the encode goes on, whatever the second still waits for.
    expect(changes.map(([state, ended]) => [state === undefined, ended])).toEqual([
      [false, undefined],
      [true, "answered"],
    ]);
    releaseSecond();
    await expect(second).resolves.toBe("second");
    expect(changes).toHaveLength(2);
  });

  it("ends a wait whose every read was abandoned by its reader without an answer", async () => {
    const { inputWait, changes } = wait();
    const reader = new AbortController();
    let calls = 0;
    const read = inputWait.run(async () => {
      if (calls++ === 0) throw unavailable();
      reader.abort();
      throw new Error("the reader hung up");
    }, reader.signal);
    await expect(read).rejects.toThrow();
    expect(changes.map(([state, ended]) => [state === undefined, ended])).toEqual([
      [false, undefined],
      [true, "abandoned"],
    ]);
  });

  it("ends at once with the attempt's reason when the attempt is cancelled", async () => {
    const controller = new AbortController();
    const { inputWait, changes } = wait({ signal: controller.signal });
    const reason = new Error("the Manager cancelled the attempt");
    const read = inputWait.run(async () => {
      controller.abort(reason);
      throw unavailable();
    });
    await expect(read).rejects.toBe(reason);
    expect(changes).toEqual([]);
  });
});
