/**
 * `freePort` picks ports a child process listens on later. A port from the kernel's ephemeral
 * range can meanwhile become the local end of any outbound connection in the run (the demo's
 * Manager once lost its port to one), so the ports offered lie below that range.
 */
import net from "node:net";
import { ephemeralRangeStart, freePort } from "@tjm/devstack/services";
import { describe, expect, it } from "vitest";

function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

describe("freePort", () => {
  it("offers ports below the ephemeral range that can be listened on", async () => {
    const start = await ephemeralRangeStart();
    for (let i = 0; i < 10; i++) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(start);
      const server = await listen(port);
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("never offers the same port twice in one process, though none was listened on yet", async () => {
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    expect(new Set(ports).size).toBe(50);
  });
});
