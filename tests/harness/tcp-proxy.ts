/**
 * A loopback TCP proxy a test can cut and restore, to make a real dependency unreachable
 * (connections refused and existing ones dropped) without touching the shared server, and
 * whose client-to-server direction it can slow down (limitUpload), to make "in the middle of
 * an upload" last long enough to act in.
 */
import net from "node:net";
import { freePort } from "@tjm/devstack/services";

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  /** Bytes per second, shared by every connection; undefined: as fast as it goes. */
  private uploadRate: number | undefined;
  /** When the bytes let through so far will have "left" at uploadRate. */
  private uploadFreeAt = 0;

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    // Cut and restored on the same port: a freePort, which no outbound connection takes meanwhile.
    const proxy = new TcpProxy(await freePort(), target);
    await proxy.restore();
    return proxy;
  }

  /** Starts accepting again on the same port. */
  async restore(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      this.sockets.add(client).add(upstream);
      const forget = () => {
        this.sockets.delete(client);
        this.sockets.delete(upstream);
        client.destroy();
        upstream.destroy();
      };
      client.on("error", forget).on("close", forget);
      upstream.on("error", forget).on("close", forget);
      this.forward(client, upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.server = server;
  }

  /**
   * Client-to-server bytes, over all connections together, at most `bytesPerSecond` from now
   * on (undefined lifts the limit). Server-to-client bytes are never slowed.
   */
  limitUpload(bytesPerSecond: number | undefined): void {
    this.uploadRate = bytesPerSecond;
    this.uploadFreeAt = Date.now();
  }

  /** Client to upstream, honouring the upstream's backpressure and the upload limit. */
  private forward(client: net.Socket, upstream: net.Socket): void {
    client.on("data", (chunk: Buffer) => {
      const flushed = upstream.write(chunk);
      let delayMs = 0;
      if (this.uploadRate !== undefined) {
        this.uploadFreeAt = Math.max(this.uploadFreeAt, Date.now()) + (chunk.length / this.uploadRate) * 1000;
        delayMs = this.uploadFreeAt - Date.now();
      }
      if (flushed && delayMs <= 0) return;
      client.pause();
      const drained = flushed
        ? Promise.resolve()
        : new Promise<void>((resolve) => upstream.once("drain", resolve).once("close", resolve));
      const waited = new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, delayMs)));
      void Promise.all([drained, waited]).then(() => client.resume());
    });
    client.on("end", () => upstream.end());
  }

  /** Refuses new connections and drops the open ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  close(): Promise<void> {
    return this.cut();
  }
}
