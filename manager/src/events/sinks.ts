/**
 * Where a subscriber's frames go. On Node, straight into the request's response and its socket:
 * web streams cost a read promise and a pull per chunk and subscriber, most of a 10,000-subscriber
 * fan-out's JavaScript (bench sse), as the Admin console's relay measured at 1,000. Elsewhere
 * (Deno), a plain ReadableStream the runtime reads. Either ends a subscriber that stopped
 * reading once more than MAX_QUEUED_BYTES wait for it, instead of holding memory.
 */
import type { ServerResponse } from "node:http";
import type { EventSink } from "./fanout.ts";

const MAX_QUEUED_BYTES = 1024 * 1024;

abstract class EndingSink implements EventSink {
  private ended = false;
  /** Called once, when the stream ends for any reason (the client, the server, back-pressure). */
  onEnd: () => void = () => {};

  abstract write(frame: Uint8Array): void;

  protected abstract close(): void;

  get isEnded(): boolean {
    return this.ended;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.close();
    this.onEnd();
  }
}

/**
 * A frame as one HTTP/1.1 chunk (size line, bytes, CRLF). The fan-out writes one frame to every
 * socket in a row, so remembering the last one builds each chunk once.
 */
let lastFrame: Uint8Array | undefined;
let lastChunk = Buffer.alloc(0);
function chunkOf(frame: Uint8Array): Buffer {
  if (frame !== lastFrame) {
    lastChunk = Buffer.concat([
      Buffer.from(`${frame.byteLength.toString(16)}\r\n`),
      frame,
      Buffer.from("\r\n"),
    ]);
    lastFrame = frame;
  }
  return lastChunk;
}

/**
 * Node: once the headers are sent, each frame goes to the socket as a ready-made chunk, one
 * write, skipping the JavaScript of http's per-write framing, most of what remains around each
 * socket's syscall; `end` still closes the chunked body through http. A response without
 * chunked encoding (HTTP/1.0) or not yet on its socket (behind a pipelined request) is written
 * through http.
 */
export class ResponseSink extends EndingSink {
  constructor(private readonly response: ServerResponse) {
    super();
    response.once("close", () => this.end());
  }

  write(frame: Uint8Array): void {
    if (this.isEnded) return;
    const { socket } = this.response;
    const direct = this.response.chunkedEncoding && socket !== null;
    if (direct ? socket.write(chunkOf(frame)) : this.response.write(frame)) return;
    // Its socket is destroyed, not ended: ending would wait for bytes it will never read.
    const queued = direct ? socket.writableLength : this.response.writableLength;
    if (queued > MAX_QUEUED_BYTES) this.response.destroy();
  }

  protected close(): void {
    this.response.end();
  }
}

/** A web stream fed synchronously; its queue is counted in bytes, so the bound means what it says. */
export class WebStreamSink extends EndingSink {
  readonly body: ReadableStream<Uint8Array>;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;

  constructor(aborted: AbortSignal) {
    super();
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        cancel: () => this.end(),
      },
      { highWaterMark: 0, size: (chunk) => chunk.byteLength },
    );
    aborted.addEventListener("abort", () => this.end());
  }

  write(frame: Uint8Array): void {
    const controller = this.controller;
    if (this.isEnded || controller === undefined) return;
    if ((controller.desiredSize ?? 0) < -MAX_QUEUED_BYTES) this.end();
    else controller.enqueue(frame);
  }

  protected close(): void {
    try {
      this.controller?.close();
    } catch {
      // already closed by the client going away
    }
  }
}
