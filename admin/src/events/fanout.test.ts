import { silentLogger } from "@tjm/platform";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EventFanout, type EventFilter, type FollowerHandle, type SessionTokens } from "./fanout.ts";

const MANAGER = "http://manager.test";
const HOUR = 3_600_000;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Generous for 2 busy cores; every wait polls for the awaited effect itself. */
const until = (assertion: () => void) => vi.waitFor(assertion, { timeout: 5000, interval: 5 });

/** One upstream request the fake Manager answered: its bearer token and the body it streams. */
class FakeUpstream {
  constructor(
    readonly bearer: string,
    readonly signal: AbortSignal,
    private readonly body: ReadableStreamDefaultController<Uint8Array>,
  ) {}
  /** Neither aborted by the fan-out nor ended by the test. */
  get live() {
    return !this.signal.aborted && !this.over;
  }
  private over = false;
  push(text: string) {
    this.body.enqueue(encoder.encode(text));
  }
  connect() {
    this.push(": connected\n\n");
  }
  end() {
    this.over = true;
    this.body.close();
  }
  fail() {
    this.over = true;
    this.body.error(new Error("connection reset"));
  }
}

const frame = (id: string, kind: string, data: string) => `id: ${id}\nevent: ${kind}\ndata: ${data}\n\n`;
const jobFrame = (id: string, kind: string, jobId: string) =>
  frame(id, kind, JSON.stringify({ kind, data: { jobId } }));

/**
 * A FAKE at the HTTP boundary: the Manager's two routes the fan-out calls, answered from state the
 * test controls (the real Manager path is covered by tests/admin/events.test.ts).
 */
class FakeManager {
  readonly upstreams: FakeUpstream[] = [];
  readonly standingsBearers: string[] = [];
  /** Tokens answered `stands: false`. */
  readonly refused = new Set<string>();
  /** Tokens whose standings request is refused as a whole (401), as a bearer no longer accepted. */
  readonly refusedBearers = new Set<string>();
  standingsAnswer: "table" | 503 | "unreachable" = "table";

  readonly fetch: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const bearer = request.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
    if (request.method === "GET" && request.url === `${MANAGER}/api/v1/operations/events`) {
      let body!: ReadableStreamDefaultController<Uint8Array>;
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          body = controller;
        },
      });
      const signal = init?.signal ?? request.signal;
      // As a real fetch does: aborting the request errors the body being read.
      signal.addEventListener("abort", () => body.error(signal.reason));
      this.upstreams.push(new FakeUpstream(bearer, signal, body));
      return new Response(stream, { headers: { "content-type": "text/event-stream" } });
    }
    if (request.method === "POST" && request.url === `${MANAGER}/api/v1/operations/token-standings`) {
      this.standingsBearers.push(bearer);
      if (this.standingsAnswer === "unreachable") throw new TypeError("fetch failed");
      if (this.standingsAnswer === 503)
        return Response.json({ code: "SERVICE_UNAVAILABLE" }, { status: 503 });
      if (this.refusedBearers.has(bearer)) return Response.json({ code: "UNAUTHENTICATED" }, { status: 401 });
      const { accessTokens } = (await request.json()) as { accessTokens: string[] };
      return Response.json({
        standings: accessTokens.map((token) => ({ stands: !this.refused.has(token) })),
      });
    }
    throw new Error(`the fake Manager has no ${request.method} ${request.url}`);
  };
}

type Token = { accessToken: string; accessExpiresAt: number };

/** In-memory sessions: `current` hands out each session's queued renewals, then undefined (ended). */
class FakeSessions implements SessionTokens {
  readonly renewals = new Map<string, Token[]>();
  readonly asked: string[] = [];
  readonly ended: Buffer[] = [];
  async current(sessionId: string) {
    this.asked.push(sessionId);
    return this.renewals.get(sessionId)?.shift();
  }
  async end(sessionHash: Buffer) {
    this.ended.push(sessionHash);
  }
}

/** A follower that records what it is sent and whether it was ended. */
function follower(session: string, filter: Partial<EventFilter> = {}, token?: Token) {
  const frames: Uint8Array[] = [];
  const state = { frames, ended: 0, text: () => frames.map((bytes) => decoder.decode(bytes)).join("") };
  const handle: FollowerHandle = {
    sessionId: session,
    sessionHash: Buffer.from(session),
    accessToken: token?.accessToken ?? `token-${session}`,
    accessExpiresAt: token?.accessExpiresAt ?? Date.now() + HOUR,
    filter: { kinds: filter.kinds, jobId: filter.jobId },
    send: (bytes) => frames.push(bytes),
    end: () => state.ended++,
  };
  return Object.assign(state, { handle });
}

const started: EventFanout[] = [];
afterEach(() => {
  for (const fanout of started.splice(0)) fanout.stop();
});

function setup(checkMs = HOUR) {
  const manager = new FakeManager();
  const sessions = new FakeSessions();
  const fanout = new EventFanout({
    managerUrl: MANAGER,
    sessions,
    checkMs,
    logger: silentLogger,
    fetch: manager.fetch,
  });
  started.push(fanout);
  /** One at a time, each once an upstream is open: concurrent joins are the first test's concern. */
  const join = async (...followers: ReturnType<typeof follower>[]) => {
    const leaves: (() => void)[] = [];
    for (const one of followers) {
      const result = await fanout.join(one.handle);
      leaves.push(result.joined ? result.leave : expect.fail("not joined"));
      await until(() => expect(manager.upstreams.filter((upstream) => upstream.live)).not.toHaveLength(0));
    }
    return leaves;
  };
  return { manager, sessions, fanout, join };
}

const CONNECTED = ": connected\n\n";
const JOB_X = "00000000-0000-4000-8000-00000000000x";
const JOB_Y = "00000000-0000-4000-8000-00000000000y";

describe("EventFanout", () => {
  it("three followers joining share one upstream and get ': connected' once, then every frame once", async () => {
    const { manager, fanout } = setup();
    const followers = [follower("a"), follower("b"), follower("c")];
    // Together, as consoles reconnecting after an upstream ended.
    const joined = await Promise.all(followers.map((one) => fanout.join(one.handle)));
    expect(joined.map((result) => result.joined)).toEqual([true, true, true]);
    await until(() => expect(manager.upstreams).not.toHaveLength(0));
    const upstream = manager.upstreams[0] as FakeUpstream;
    upstream.connect();
    const frames = [jobFrame("1", "job.created", JOB_X), jobFrame("2", "job.updated", JOB_Y)];
    for (const text of frames) upstream.push(text);
    const expected = CONNECTED + frames.join("");
    await until(() => {
      for (const one of followers) expect(one.text()).toBe(expected);
    });
    // The trap: join() sees no upstream until open() has awaited the pilot's token and set it.
    expect(manager.upstreams).toHaveLength(1);
    const [first, ...others] = followers.map((one) => Buffer.concat(one.frames));
    for (const bytes of others) expect(bytes.equals(first as Buffer)).toBe(true);
  });

  it("a follower filtered by kinds or by jobId gets only its events; unparsable data reaches no jobId follower", async () => {
    const { manager, join } = setup();
    const all = follower("all");
    const created = follower("created", { kinds: new Set(["job.created"]) });
    const onX = follower("on-x", { jobId: JOB_X });
    await join(all, created, onX);
    expect(manager.upstreams).toHaveLength(1);
    const upstream = manager.upstreams[0] as FakeUpstream;
    upstream.connect();
    const createdX = jobFrame("1", "job.created", JOB_X);
    const updatedX = jobFrame("2", "job.updated", JOB_X);
    const createdY = jobFrame("3", "job.created", JOB_Y);
    const notJson = frame("4", "job.created", `{"data":{"jobId":"${JOB_X}"`);
    const worker = frame("5", "worker.registered", JSON.stringify({ data: { workerId: "w" } }));
    const last = jobFrame("6", "job.progress", JOB_X);
    for (const text of [createdX, updatedX, createdY, notJson, worker, last]) upstream.push(text);
    // One stream is read in order: once the last frame is in, every earlier one was decided.
    await until(() => expect(all.text()).toContain(last));
    expect(all.text()).toBe(CONNECTED + createdX + updatedX + createdY + notJson + worker + last);
    expect(created.text()).toBe(CONNECTED + createdX + createdY + notJson);
    expect(onX.text()).toBe(CONNECTED + createdX + updatedX + last);
  });

  it("a join whose token the Manager refuses gets 401 and ends its session; a Manager not answering gives 502", async () => {
    const { manager, sessions, fanout } = setup();
    manager.refused.add("token-refused");
    expect(await fanout.join(follower("refused").handle)).toEqual({ joined: false, status: 401 });
    manager.refusedBearers.add("token-bearer");
    expect(await fanout.join(follower("bearer").handle)).toEqual({ joined: false, status: 401 });
    expect(sessions.ended).toEqual([Buffer.from("refused"), Buffer.from("bearer")]);

    manager.standingsAnswer = 503;
    expect(await fanout.join(follower("away").handle)).toEqual({ joined: false, status: 502 });
    manager.standingsAnswer = "unreachable";
    expect(await fanout.join(follower("gone").handle)).toEqual({ joined: false, status: 502 });
    expect(sessions.ended).toHaveLength(2);
    expect(manager.upstreams).toHaveLength(0);
  });

  it("standing checks end only the followers of a session whose token stops standing", async () => {
    const { manager, sessions, join } = setup(50);
    const [b, a1, a2, c] = [follower("b"), follower("a"), follower("a"), follower("c")];
    await join(b); // first followed: the bearer of each standings request
    await join(a1, a2, c);
    expect(manager.upstreams).toHaveLength(1);
    const upstream = manager.upstreams[0] as FakeUpstream;
    upstream.connect();

    manager.refused.add("token-a");
    await until(() => expect([a1.ended, a2.ended]).toEqual([1, 1]));
    expect(sessions.ended).toEqual([Buffer.from("a")]);
    const one = jobFrame("1", "job.created", JOB_X);
    upstream.push(one);
    await until(() => expect([b.text(), c.text()]).toEqual([CONNECTED + one, CONNECTED + one]));
    expect([a1.text(), a2.text()]).toEqual([CONNECTED, CONNECTED]);

    // The whole request refused (401): only its bearer's session ends, the rest is asked next tick.
    manager.refusedBearers.add("token-b");
    await until(() => expect(b.ended).toBe(1));
    expect(sessions.ended).toEqual([Buffer.from("a"), Buffer.from("b")]);
    const two = jobFrame("2", "job.updated", JOB_X);
    upstream.push(two);
    await until(() => expect(c.text()).toBe(CONNECTED + one + two));
    expect(c.ended).toBe(0);
    expect(b.text()).toBe(CONNECTED + one);
  });

  it("an upstream whose token nears expiry is replaced with a renewed token; overlapping frames pass once", async () => {
    const { manager, sessions, join } = setup();
    const soon = () => ({ accessToken: "token-1", accessExpiresAt: Date.now() + 400 });
    const [f1, f2] = [follower("s", {}, soon()), follower("s", {}, soon())];
    // Within 60 s of expiry, each upstream asks the session for a current token.
    sessions.renewals.set("s", [soon(), { accessToken: "token-2", accessExpiresAt: Date.now() + HOUR }]);
    await join(f1, f2);
    expect(manager.upstreams).toHaveLength(1);
    const old = manager.upstreams[0] as FakeUpstream;
    old.connect();
    // Less than 30 s left: the replacement is opened at once.
    await until(() => expect(manager.upstreams).toHaveLength(2));
    const renewed = manager.upstreams[1] as FakeUpstream;
    expect([old.bearer, renewed.bearer]).toEqual(["token-1", "token-2"]);
    expect(sessions.asked).toEqual(["s", "s"]);

    const e1 = jobFrame("1", "job.created", JOB_X);
    old.push(e1);
    renewed.connect();
    const e2 = jobFrame("2", "job.updated", JOB_X);
    renewed.push(e2);
    await until(() => expect(f1.text()).toBe(CONNECTED + e1 + e2));
    const e3 = jobFrame("3", "job.progress", JOB_X);
    old.push(e2); // in flight on both
    old.push(e3); // in flight on the old one only
    await until(() => expect(f1.text()).toBe(CONNECTED + e1 + e2 + e3));
    expect(old.signal.aborted).toBe(false);
    // Closed after the overlap (1 s): aborted by the fan-out, not ended unplanned.
    await until(() => expect(old.signal.aborted).toBe(true));
    const e4 = jobFrame("4", "job.updated", JOB_X);
    renewed.push(e4);
    await until(() => expect(f2.text()).toBe(CONNECTED + e1 + e2 + e3 + e4));
    expect(f1.text()).toBe(f2.text());
    expect([f1.ended, f2.ended, renewed.signal.aborted]).toEqual([0, 0, false]);
  });

  it("an upstream ending unplanned ends every follower; the last leaving aborts it; stop() ends all", async () => {
    const { manager, fanout, join } = setup();
    const closed = [follower("a"), follower("b")];
    await join(...closed);
    expect(manager.upstreams).toHaveLength(1);
    manager.upstreams[0]?.connect();
    manager.upstreams[0]?.end();
    await until(() => expect(closed.map((one) => one.ended)).toEqual([1, 1]));

    const broken = [follower("a"), follower("b")];
    await join(...broken);
    expect(manager.upstreams).toHaveLength(2);
    manager.upstreams[1]?.connect();
    manager.upstreams[1]?.fail();
    await until(() => expect(broken.map((one) => one.ended)).toEqual([1, 1]));

    const [leaveA, leaveB] = await join(follower("a"), follower("b"));
    expect(manager.upstreams).toHaveLength(3);
    const left = manager.upstreams[2] as FakeUpstream;
    leaveA?.();
    expect(left.signal.aborted).toBe(false);
    leaveB?.();
    expect(left.signal.aborted).toBe(true);

    const stopped = [follower("a"), follower("b")];
    await join(...stopped);
    expect(manager.upstreams).toHaveLength(4);
    fanout.stop();
    expect(stopped.map((one) => one.ended)).toEqual([1, 1]);
    expect(manager.upstreams[3]?.signal.aborted).toBe(true);
  });
});
