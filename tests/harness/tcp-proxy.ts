/**
 * A loopback TCP proxy a test can cut and restore, to make a real dependency unreachable
 * (connections refused and existing ones dropped) without touching the shared server.
 */
import net from "node:net";

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const probe = net.createServer();
    const port = await new Promise<number>((resolve) =>
      probe.listen(0, "127.0.0.1", () => resolve((probe.address() as net.AddressInfo).port)),
    );
    await new Promise((resolve) => probe.close(resolve));
    const proxy = new TcpProxy(port, target);
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
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.server = server;
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
