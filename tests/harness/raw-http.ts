/**
 * HTTP/1.1 written by hand on a raw socket (node:net): a test that must know exactly how many
 * body bytes were on the wire when an answer arrived, which fetch and node:http hide (they
 * buffer, and fail the whole call when the server answers before the body is sent).
 */
import { connect, type Socket } from "node:net";

export interface RawAnswer {
  status: number;
  /** Header names lowercased. */
  headers: Record<string, string>;
  body: string;
}

const HEAD_END = "\r\n\r\n";

/** The answer in `bytes` once it is complete; undefined while more is to come. */
function parseAnswer(bytes: Buffer, ended: boolean): RawAnswer | undefined {
  const headEnd = bytes.indexOf(HEAD_END);
  if (headEnd < 0) return undefined;
  const [statusLine = "", ...lines] = bytes.subarray(0, headEnd).toString("latin1").split("\r\n");
  const status = Number(statusLine.split(" ")[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = bytes.subarray(headEnd + HEAD_END.length);
  if (headers["content-length"] !== undefined) {
    const length = Number(headers["content-length"]);
    if (rest.length < length) return undefined;
    return { status, headers, body: rest.subarray(0, length).toString("utf8") };
  }
  if (headers["transfer-encoding"]?.includes("chunked")) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf("\r\n", at);
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(rest.subarray(at, lineEnd).toString("latin1"), 16);
      if (size === 0) return { status, headers, body: Buffer.concat(parts).toString("utf8") };
      if (rest.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  return ended ? { status, headers, body: rest.toString("utf8") } : undefined;
}

/** One connection: a request head, body bytes sent as the test decides, the answer as it comes. */
export class RawConnection {
  private received = Buffer.alloc(0);
  private ended = false;
  private readonly changed = new Set<() => void>();
  /** Body bytes (chunk framing not counted) handed to the socket before the answer's first byte came. */
  sentBeforeAnswer: number | undefined;
  /** Body bytes handed to the socket so far. */
  sent = 0;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (data: Buffer) => {
      this.sentBeforeAnswer ??= this.sent;
      this.received = Buffer.concat([this.received, data]);
      this.notify();
    });
    const end = () => {
      this.ended = true;
      this.notify();
    };
    socket.on("end", end);
    socket.on("close", end);
    // A server that answered and closed resets the unsent rest: that is the point, not a failure.
    socket.on("error", end);
  }

  static open(baseUrl: string): Promise<RawConnection> {
    const url = new URL(baseUrl);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: url.hostname, port: Number(url.port) }, () =>
        resolve(new RawConnection(socket)),
      );
      socket.once("error", reject);
    });
  }

  private notify(): void {
    for (const listener of this.changed) listener();
  }

  /** Whether the server closed (or reset) the connection. */
  get closed(): boolean {
    return this.ended;
  }

  /** The request line and headers; `host` is added. */
  head(method: string, target: string, headers: Record<string, string>): Promise<void> {
    const lines = [`${method} ${target} HTTP/1.1`, "host: 127.0.0.1"];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    return this.write(Buffer.from(`${lines.join("\r\n")}${HEAD_END}`, "latin1"));
  }

  /** Body bytes as they are, for a declared Content-Length. */
  body(bytes: Buffer): Promise<void> {
    this.sent += bytes.length;
    return this.write(bytes);
  }

  /** Body bytes as one chunk of a chunked body. */
  chunk(bytes: Buffer): Promise<void> {
    this.sent += bytes.length;
    return this.write(
      Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]),
    );
  }

  /** Writes and waits until the socket takes more; resolves at once on a closed connection. */
  private write(bytes: Buffer): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.changed.delete(done);
        resolve();
      };
      this.changed.add(done);
      this.socket.write(bytes, () => done());
    });
  }

  /** Whether any byte of an answer has arrived. */
  get answered(): boolean {
    return this.received.length > 0;
  }

  /** Resolves when `check` holds, or after `timeoutMs` with whether it did. */
  private until(check: () => boolean, timeoutMs: number): Promise<boolean> {
    if (check()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const listener = () => {
        if (!check()) return;
        finish(true);
      };
      const finish = (held: boolean) => {
        clearTimeout(timer);
        this.changed.delete(listener);
        resolve(held);
      };
      const timer = setTimeout(() => finish(check()), timeoutMs);
      this.changed.add(listener);
    });
  }

  /** The complete answer, or undefined if none came within `timeoutMs`. */
  async answer(timeoutMs = 5000): Promise<RawAnswer | undefined> {
    let answer: RawAnswer | undefined;
    await this.until(() => {
      answer = parseAnswer(this.received, this.ended);
      return answer !== undefined;
    }, timeoutMs);
    return answer;
  }

  /** Whether the server closed the connection within `timeoutMs`. */
  closedWithin(timeoutMs: number): Promise<boolean> {
    return this.until(() => this.ended, timeoutMs);
  }

  destroy(): void {
    this.socket.destroy();
  }
}
