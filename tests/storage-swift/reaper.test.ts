/**
 * The global teardown's last resort for Swift servers a test file left running: it kills them
 * by the PIDs they recorded, and only them (a recorded PID now held by another program is
 * left alone), once the file's process is gone.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "@tjm/devstack/services";
import { reapOrphanedSwift, SAIO } from "@tjm/devstack/swift";
import { afterAll, describe, expect, it } from "vitest";

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

describe("reapOrphanedSwift", () => {
  it("kills the servers of an instance whose owner is gone, spares other programs, removes the state", async () => {
    const directory = await mkdtemp(join(tmpdir(), "tjm-swift-"));
    try {
      const stateDir = join(directory, "state1");
      await mkdir(join(stateDir, "run"), { recursive: true });
      // A stand-in server: its command line names saio.py and its state directory, as real ones do.
      const server = spawn("/usr/bin/python3", ["-c", "import time; time.sleep(120)", SAIO, stateDir], {
        stdio: "ignore",
      });
      // A PID file pointing at a process that is not a server of this instance.
      const bystander = spawn("sleep", ["120"], { stdio: "ignore" });
      children.push(server, bystander);
      await writeFile(join(stateDir, "run", "proxy.pid"), String(server.pid));
      await writeFile(join(stateDir, "run", "object.pid"), String(bystander.pid));
      // An owner that has exited.
      const owner = spawn("true");
      await new Promise((resolve) => owner.once("exit", resolve));
      await writeFile(join(directory, "owner.pid"), String(owner.pid));

      expect(await reapOrphanedSwift()).toBe(1);
      await waitFor("the server killed", async () => !running(server), 5_000, 20);
      expect(server.signalCode).toBe("SIGKILL");
      expect(running(bystander)).toBe(true);
      await expect(stat(directory)).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("leaves an instance whose owner is alive", async () => {
    const directory = await mkdtemp(join(tmpdir(), "tjm-swift-"));
    try {
      await writeFile(join(directory, "owner.pid"), String(process.pid));
      await reapOrphanedSwift();
      expect((await stat(directory)).isDirectory()).toBe(true);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
