/**
 * The Manager's operations event stream, followed once per Admin process and fanned out to
 * every console session following `/api/events`: one upstream instead of one per session, so
 * an event costs the Manager one write and the console one parse, however many operators watch.
 *
 * The upstream is opened with the access token of one following session (the pilot). Before
 * that token expires, a new upstream is opened with a current token and the old one closed once
 * the new one is connected; events arriving on both are passed on once (by id). Each session's
 * own token is asked after in batches (`POST /api/v1/operations/token-standings`) every check
 * interval: a session whose token the Manager no longer accepts ends, as a per-session stream
 * would have been ended by the Manager itself. An upstream that ends unplanned ends every
 * follower: the browsers reconnect and refetch, since the stream does not replay.
 */
import type { Logger } from "@tjm/platform";
import { type components, createTjmClient } from "@tjm/sdk";

type EventKind = components["schemas"]["EventEnvelope"]["kind"];

export const EVENT_KINDS = [
  "job.created",
  "job.updated",
  "job.progress",
  "worker.registered",
  "worker.updated",
] as const satisfies readonly EventKind[];
// Fails to compile when the Manager's document names a kind this list lacks.
const everyKind: Exclude<EventKind, (typeof EVENT_KINDS)[number]> extends never ? true : never = true;
void everyKind;

/** Which events a follower asked for (`kinds`, `jobId`), as the Manager's own stream filters. */
export interface EventFilter {
  kinds: ReadonlySet<string> | undefined;
  jobId: string | undefined;
}

/** A session's current access token, refreshed when due; undefined once the session has ended. */
export interface SessionTokens {
  current(sessionId: string): Promise<{ accessToken: string; accessExpiresAt: number } | undefined>;
  end(sessionHash: Buffer): Promise<void>;
}

export interface FanoutOptions {
  managerUrl: string;
  sessions: SessionTokens;
  /** How often followers' tokens are asked after (and renewed when close to expiry). */
  checkMs: number;
  logger: Logger;
  fetch?: typeof fetch;
}

export interface FollowerHandle {
  sessionId: string;
  sessionHash: Buffer;
  accessToken: string;
  accessExpiresAt: number;
  filter: EventFilter;
  /** Called with each frame (bytes shared between followers: never modified). */
  send(frame: Uint8Array): void;
  /** Ends the follower's stream; the fan-out has already forgotten it. */
  end(): void;
}

export type JoinResult = { joined: true; leave: () => void } | { joined: false; status: 401 | 502 };

const MANAGER_EVENTS_PATH = "/api/v1/operations/events";
/** The Manager's limit per standings request. */
const STANDINGS_PER_REQUEST = 100;
/** A token this close to expiry is renewed (the session refreshes it) before it is used again. */
const RENEW_TOKEN_BEFORE_MS = 60_000;
/** The upstream is replaced this long before its token expires (or halfway, if sooner). */
const REPLACE_UPSTREAM_BEFORE_MS = 30_000;
/** After a replacement is connected, the old upstream is read this long for frames in flight. */
const REPLACEMENT_OVERLAP_MS = 1000;
/** Ids of recently passed events, to pass each once while two upstreams overlap. */
const RECENT_IDS = 4096;
/** 15 s, as the Manager's own stream: inside the idle timeouts of common proxies. */
const KEEP_ALIVE_MS = 15_000;

const encoder = new TextEncoder();
const CONNECTED = encoder.encode(": connected\n\n");
const KEEP_ALIVE = encoder.encode(": keep-alive\n\n");
const FRAME_END = "\n\n";

interface Follower extends FollowerHandle {
  connected: boolean;
}

interface Upstream {
  abort: AbortController;
  connected: boolean;
  /** When its token expires (epoch ms). */
  expiresAt: number;
  replaceTimer?: NodeJS.Timeout;
}

/** One SSE frame's fields, as far as the fan-out needs them. */
function parseFrame(frame: string): { id?: string; kind?: string; data?: string; comment?: string } {
  const fields: { id?: string; kind?: string; data?: string; comment?: string } = {};
  for (const line of frame.split("\n")) {
    if (line.startsWith(":")) fields.comment = line.slice(1).trim();
    else if (line.startsWith("id: ")) fields.id = line.slice(4);
    else if (line.startsWith("event: ")) fields.kind = line.slice(7);
    else if (line.startsWith("data: ")) fields.data = line.slice(6);
  }
  return fields;
}

function jobIdOf(data: string | undefined): string | undefined {
  if (data === undefined) return undefined;
  try {
    const jobId = (JSON.parse(data) as { data?: { jobId?: unknown } }).data?.jobId;
    return typeof jobId === "string" ? jobId : undefined;
  } catch {
    return undefined;
  }
}

export class EventFanout {
  private readonly followers = new Set<Follower>();
  private readonly fetchImpl: typeof fetch;
  private upstream: Upstream | undefined;
  private readonly recentIds = new Set<string>();
  private readonly recentOrder: string[] = [];
  private checkTimer: NodeJS.Timeout | undefined;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private checking = false;
  private stopped = false;

  constructor(private readonly options: FanoutOptions) {
    this.fetchImpl = options.fetch ?? fetch;
  }

  /**
   * Adds a follower once the Manager accepts its session's token: 401 (the session ends) when
   * it does not, 502 when the Manager does not answer.
   */
  async join(handle: FollowerHandle): Promise<JoinResult> {
    let standing: Awaited<ReturnType<EventFanout["standings"]>>;
    try {
      standing = await this.standings([handle.accessToken]);
    } catch (error) {
      this.options.logger.warn("the Manager did not answer a token standing", { error: String(error) });
      return { joined: false, status: 502 };
    }
    if (standing === "bearer refused" || standing[0]?.stands !== true) {
      await this.options.sessions.end(handle.sessionHash);
      return { joined: false, status: 401 };
    }
    const follower: Follower = { ...handle, connected: false };
    this.followers.add(follower);
    if (this.upstream?.connected) this.markConnected(follower);
    this.checkTimer ??= setInterval(() => void this.check(), this.options.checkMs);
    this.keepAliveTimer ??= setInterval(() => this.broadcast(KEEP_ALIVE), KEEP_ALIVE_MS);
    if (this.upstream === undefined) void this.open();
    return { joined: true, leave: () => this.leave(follower) };
  }

  /** Ends every follower and the upstream (at shutdown). */
  stop(): void {
    this.stopped = true;
    this.endAll();
  }

  private leave(follower: Follower): void {
    if (!this.followers.delete(follower)) return;
    if (this.followers.size > 0) return;
    clearInterval(this.checkTimer);
    clearInterval(this.keepAliveTimer);
    this.checkTimer = undefined;
    this.keepAliveTimer = undefined;
    this.closeUpstream(this.upstream);
    this.upstream = undefined;
  }

  private end(follower: Follower): void {
    this.leave(follower);
    follower.end();
  }

  private endAll(): void {
    for (const follower of [...this.followers]) this.end(follower);
  }

  private endSession(sessionHash: Buffer): void {
    for (const follower of [...this.followers])
      if (follower.sessionHash.equals(sessionHash)) this.end(follower);
  }

  private markConnected(follower: Follower): void {
    if (follower.connected) return;
    follower.connected = true;
    follower.send(CONNECTED);
  }

  private broadcast(frame: Uint8Array): void {
    for (const follower of this.followers) if (follower.connected) follower.send(frame);
  }

  private closeUpstream(upstream: Upstream | undefined): void {
    if (upstream === undefined) return;
    clearTimeout(upstream.replaceTimer);
    upstream.abort.abort();
  }

  /** The follower whose token lasts longest: the upstream is opened with it. */
  private pilot(): Follower | undefined {
    let best: Follower | undefined;
    for (const follower of this.followers)
      if (best === undefined || follower.accessExpiresAt > best.accessExpiresAt) best = follower;
    return best;
  }

  /**
   * Opens an upstream with a pilot's current token. A replacement (`replacing`) takes over once
   * connected; otherwise, when none can be opened, every follower ends.
   */
  private async open(replacing?: Upstream): Promise<void> {
    while (!this.stopped && this.followers.size > 0) {
      const pilot = this.pilot() as Follower;
      const upstream: Upstream = { abort: new AbortController(), connected: false, expiresAt: 0 };
      // Taken before the first await: joins arriving meanwhile find it and open no other.
      if (replacing === undefined) this.upstream = upstream;
      const current = await this.currentToken(pilot);
      if (upstream.abort.signal.aborted) return;
      if (current === undefined) continue;
      upstream.expiresAt = pilot.accessExpiresAt;
      let response: Response;
      try {
        response = await this.fetchImpl(`${this.options.managerUrl}${MANAGER_EVENTS_PATH}`, {
          headers: { authorization: `Bearer ${current}`, accept: "text/event-stream" },
          signal: upstream.abort.signal,
        });
      } catch (error) {
        if (upstream.abort.signal.aborted) return;
        this.options.logger.warn("the Manager's event stream did not answer", { error: String(error) });
        return this.upstreamFailed(upstream, replacing);
      }
      if (response.status === 401 || response.status === 403) {
        // The pilot's session no longer stands: it ends, and another follower's token is tried.
        await response.body?.cancel();
        await this.refuse(pilot);
        continue;
      }
      if (!response.ok || response.body === null) {
        await response.body?.cancel();
        this.options.logger.warn("the Manager refused its event stream", { status: response.status });
        return this.upstreamFailed(upstream, replacing);
      }
      if (upstream.abort.signal.aborted) return;
      void this.read(upstream, response.body, replacing);
      return;
    }
  }

  private upstreamFailed(upstream: Upstream, replacing: Upstream | undefined): void {
    // A failed replacement leaves the current upstream to run until its token expires.
    if (replacing !== undefined) return;
    if (this.upstream === upstream) {
      this.upstream = undefined;
      this.endAll();
    }
  }

  private async read(upstream: Upstream, body: ReadableStream<Uint8Array>, replacing?: Upstream) {
    const decoder = new TextDecoder();
    let pending = "";
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        pending += decoder.decode(value, { stream: true });
        let end = pending.indexOf(FRAME_END);
        while (end >= 0) {
          this.frame(upstream, pending.slice(0, end), replacing);
          pending = pending.slice(end + FRAME_END.length);
          end = pending.indexOf(FRAME_END);
        }
      }
    } catch {
      // aborted, or the connection broke: decided below
    }
    clearTimeout(upstream.replaceTimer);
    if (upstream.abort.signal.aborted || this.upstream !== upstream) return;
    // Ended unplanned (the Manager stopped, or the pilot's token stopped standing): events may
    // be missed before another upstream is open, so the browsers reconnect and refetch.
    this.upstream = undefined;
    if (this.followers.size > 0) this.options.logger.info("the Manager ended the shared event stream");
    this.endAll();
  }

  private frame(upstream: Upstream, text: string, replacing: Upstream | undefined): void {
    const fields = parseFrame(text);
    if (fields.comment === "connected") {
      this.connected(upstream, replacing);
      return;
    }
    if (fields.id === undefined || this.recentIds.has(fields.id)) return;
    this.remember(fields.id);
    const bytes = encoder.encode(text + FRAME_END);
    let jobId: string | undefined;
    let jobIdParsed = false;
    for (const follower of this.followers) {
      if (!follower.connected) continue;
      const { kinds, jobId: wanted } = follower.filter;
      if (kinds !== undefined && (fields.kind === undefined || !kinds.has(fields.kind))) continue;
      if (wanted !== undefined) {
        if (!jobIdParsed) {
          jobId = jobIdOf(fields.data);
          jobIdParsed = true;
        }
        if (jobId !== wanted) continue;
      }
      follower.send(bytes);
    }
  }

  private connected(upstream: Upstream, replacing: Upstream | undefined): void {
    upstream.connected = true;
    if (replacing !== undefined) {
      if (this.upstream !== replacing) {
        upstream.abort.abort();
        return;
      }
      this.upstream = upstream;
      setTimeout(() => this.closeUpstream(replacing), REPLACEMENT_OVERLAP_MS).unref();
    }
    for (const follower of this.followers) this.markConnected(follower);
    const lifetime = upstream.expiresAt - Date.now();
    const replaceIn = Math.max(0, Math.min(lifetime - REPLACE_UPSTREAM_BEFORE_MS, Math.floor(lifetime / 2)));
    upstream.replaceTimer = setTimeout(() => {
      if (this.upstream === upstream && !this.stopped) void this.open(upstream);
    }, replaceIn);
    upstream.replaceTimer.unref();
  }

  private remember(id: string): void {
    this.recentIds.add(id);
    this.recentOrder.push(id);
    if (this.recentOrder.length > RECENT_IDS) this.recentIds.delete(this.recentOrder.shift() as string);
  }

  /** The follower's token, renewed through its session when close to expiry; undefined: it ended. */
  private async currentToken(follower: Follower): Promise<string | undefined> {
    if (follower.accessExpiresAt - Date.now() > RENEW_TOKEN_BEFORE_MS) return follower.accessToken;
    const current = await this.options.sessions.current(follower.sessionId).catch(() => undefined);
    if (current === undefined) {
      this.endSession(follower.sessionHash);
      return undefined;
    }
    for (const other of this.followers)
      if (other.sessionHash.equals(follower.sessionHash)) {
        other.accessToken = current.accessToken;
        other.accessExpiresAt = current.accessExpiresAt;
      }
    return current.accessToken;
  }

  /**
   * The standing of each token, the first one the request's bearer; "bearer refused" when the
   * Manager refused that one (so it stands no more, and the others were not asked).
   */
  private async standings(accessTokens: string[]): Promise<{ stands: boolean }[] | "bearer refused"> {
    const bearer = accessTokens[0] as string;
    const client = createTjmClient({
      baseUrl: this.options.managerUrl,
      token: bearer,
      fetch: this.fetchImpl,
    });
    const { data, response } = await client.POST("/api/v1/operations/token-standings", {
      body: { accessTokens },
    });
    if (response.status === 401 || response.status === 403) return "bearer refused";
    if (data === undefined) throw new Error(`the Manager answered ${response.status} to token-standings`);
    return data.standings;
  }

  private async refuse(follower: Follower): Promise<void> {
    await this.options.sessions.end(follower.sessionHash);
    this.endSession(follower.sessionHash);
  }

  /** Every session followed: its token renewed when due, then asked after, a hundred per request. */
  private async check(): Promise<void> {
    if (this.checking || this.followers.size === 0) return;
    this.checking = true;
    try {
      const bySession = new Map<string, Follower>();
      for (const follower of this.followers) bySession.set(follower.sessionHash.toString("hex"), follower);
      const asked: Follower[] = [];
      for (const follower of bySession.values())
        if ((await this.currentToken(follower)) !== undefined) asked.push(follower);
      for (let start = 0; start < asked.length; start += STANDINGS_PER_REQUEST) {
        const chunk = asked.slice(start, start + STANDINGS_PER_REQUEST);
        const answers = await this.standings(chunk.map((follower) => follower.accessToken));
        // A refused bearer ends its session; the rest of its chunk is asked at the next tick.
        if (answers === "bearer refused") await this.refuse(chunk[0] as Follower);
        else
          for (const [index, answer] of answers.entries())
            if (!answer.stands) await this.refuse(chunk[index] as Follower);
      }
    } catch (error) {
      // The Manager away for a tick: streams stay, the next tick decides.
      this.options.logger.warn("could not ask after the tokens of open event streams", {
        error: String(error),
      });
    } finally {
      this.checking = false;
    }
  }
}
