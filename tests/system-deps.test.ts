/**
 * scripts/system-deps, the real script, run on a PATH of links to just the tools a test lists,
 * so the test decides what is installed. The apt-get on that PATH installs nothing (no test may
 * install packages): it records its arguments and DEBIAN_FRONTEND, and for `install` runs what
 * the test gives it. The non-root runs are real: uid 65534 through setpriv.
 */
import { accessSync, constants, existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runProcess } from "@tjm/devstack/run-process";
import { freePort } from "@tjm/devstack/services";
import { afterEach, describe, expect, inject, it } from "vitest";

const SCRIPT = fileURLToPath(new URL("../scripts/system-deps", import.meta.url));
const NOBODY = 65534;
const runnerIsRoot = process.getuid?.() === 0;

const FFMPEG_WHY = "the Worker agent encodes with ffmpeg and probes media with ffprobe";
const SWIFT_PACKAGES =
  "swift swift-proxy swift-account swift-container swift-object python3-swift python3-lxml python3-requests attr";
const SWIFT_WHY = "tests/storage-swift run against Swift's s3api, a real S3 on this machine";
const CHROMIUM_WHY =
  "browser tests (playwright-core) drive it headless; installed ahead of the Admin console's tests";
const PROMTOOL_WHY =
  "tests/deploy run it on the alert rules (check and unit tests) and the Prometheus config";
const HAPROXY_WHY = "tests/deploy check the compose stack's gateway configuration with haproxy -c";
const FONTS_WHY =
  "pages and e-mails in Persian, Dari and Pashto render in Chromium with a font holding Pashto's letters";
const FONTS_PRESENT = "  present     a font with Persian, Dari and Pashto letters";
const EVERY_TOOL = [
  "bash",
  "sleep",
  "dpkg-query",
  "ffmpeg",
  "ffprobe",
  "nats-server",
  "chromium",
  "promtool",
  "haproxy",
  "fc-list",
];

/** Where a tool lives on this machine: the runner's PATH, then the sbin directories. */
function locate(tool: string): string {
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/sbin"];
  for (const dir of dirs.filter(Boolean)) {
    const path = join(dir, tool);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {}
  }
  throw new Error(`${tool} is not installed here`);
}

interface AptGet {
  /** Tools an `apt-get install` makes appear on the PATH. */
  installs?: string[];
  /** An `apt-get install` prints this on stderr and exits 100, as apt does. */
  fails?: string;
}

const directories: string[] = [];
afterEach(async () => {
  for (const dir of directories.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A PATH of `tools` plus, unless `aptGet` is null, the recording apt-get. */
async function fakeSystem(tools: string[], aptGet: AptGet | null = {}) {
  const dir = await mkdtemp(join(tmpdir(), "tjm-system-deps-"));
  directories.push(dir);
  const bin = join(dir, "bin");
  const calls = join(dir, "apt-get.calls");
  await mkdir(bin);
  for (const tool of tools) await symlink(locate(tool), join(bin, tool));
  if (aptGet) {
    const onInstall = [
      ...(aptGet.installs ?? []).map((tool) => `${locate("ln")} -s ${locate(tool)} ${join(bin, tool)}`),
      ...(aptGet.fails ? [`echo '${aptGet.fails}' >&2`, "exit 100"] : []),
    ].join("\n    ");
    await writeFile(
      join(bin, "apt-get"),
      `#!${locate("bash")}\necho "DEBIAN_FRONTEND=$DEBIAN_FRONTEND $*" >> ${calls}\nif [ "$1" = install ]; then\n    ${onInstall || ":"}\nfi\n`,
      { mode: 0o755 },
    );
  }
  // uid 65534 must reach the tools; its apt-get (never called, as the tests prove) could record.
  await writeFile(calls, "", { mode: 0o666 });
  await chmod(calls, 0o666);
  await chmod(dir, 0o755);
  return {
    bin,
    has: (tool: string) => existsSync(join(bin, tool)),
    aptCalls: async () => (await readFile(calls, "utf8")).split("\n").filter(Boolean),
  };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  milliseconds: number;
}

/** Runs the script with exactly `env` (nothing of the runner's), as root or as uid 65534. */
async function systemDeps(
  args: string[],
  env: Record<string, string>,
  user: "root" | "nobody",
): Promise<Run> {
  const [command, ...rest] =
    user === "nobody" && runnerIsRoot
      ? [locate("setpriv"), `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", SCRIPT, ...args]
      : [SCRIPT, ...args];
  const started = performance.now();
  const result = await runProcess(command as string, rest, { env });
  return { ...result, milliseconds: performance.now() - started };
}

/** Tests that act as root need a root runner; the ones as uid 65534 run anywhere. */
const asRoot = it.skipIf(!runnerIsRoot);

describe("scripts/system-deps --dry-run", () => {
  asRoot.each([
    ["neither ffmpeg nor ffprobe", ["bash", "nats-server", "fc-list"]],
    ["ffmpeg without ffprobe", ["bash", "nats-server", "ffmpeg", "fc-list"]],
    ["ffprobe without ffmpeg", ["bash", "nats-server", "ffprobe", "fc-list"]],
  ])("with %s on PATH: lists ffmpeg to install and why, runs nothing, exits 0", async (_, tools) => {
    const system = await fakeSystem(tools);
    const run = await systemDeps(["--dry-run", "demo"], { PATH: system.bin }, "root");
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe(
      [
        "system-deps demo (dry run, nothing changes):",
        "  present     nats-server",
        FONTS_PRESENT,
        `  to install  ffmpeg: ${FFMPEG_WHY}`,
        "would run (DEBIAN_FRONTEND=noninteractive, quiet):",
        "  apt-get update && apt-get install -y ffmpeg",
        "",
      ].join("\n"),
    );
    expect(await system.aptCalls()).toEqual([]);
    expect(system.has("ffmpeg") && system.has("ffprobe")).toBe(false);
  });

  it("as a user who cannot install: the plan, then the commands a real run would ask for", async () => {
    const system = await fakeSystem(["bash", "nats-server", "fc-list"]);
    const run = await systemDeps(["--dry-run", "demo"], { PATH: system.bin }, "nobody");
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe(
      [
        "system-deps demo (dry run, nothing changes):",
        "  present     nats-server",
        FONTS_PRESENT,
        `  to install  ffmpeg: ${FFMPEG_WHY}`,
        "not root: a run without --dry-run stops with exit code 1 and asks for:",
        "  sudo apt-get update && sudo apt-get install -y ffmpeg",
        "  brew install ffmpeg",
        "",
      ].join("\n"),
    );
    expect(await system.aptCalls()).toEqual([]);
  });

  asRoot("the test profile adds chromium (and Swift) to what the demo needs", async () => {
    const system = await fakeSystem(EVERY_TOOL.filter((tool) => tool !== "chromium"));
    const demo = await systemDeps(["--dry-run", "demo"], { PATH: system.bin }, "root");
    const test = await systemDeps(["--dry-run", "test"], { PATH: system.bin }, "root");
    expect(demo.stdout).toContain("nothing to install\n");
    expect(test.stdout).toContain(`  present     OpenStack Swift (${SWIFT_PACKAGES})\n`);
    expect(test.stdout).toContain(`  to install  chromium: ${CHROMIUM_WHY}\n`);
    expect(test.stdout).toContain("  apt-get update && apt-get install -y chromium\n");
  });

  asRoot(
    "the test profile adds promtool: Debian's prometheus, without its recommended exporter",
    async () => {
      const system = await fakeSystem(EVERY_TOOL.filter((tool) => tool !== "promtool" && tool !== "haproxy"));
      const demo = await systemDeps(["--dry-run", "demo"], { PATH: system.bin }, "root");
      const test = await systemDeps(["--dry-run", "test"], { PATH: system.bin }, "root");
      expect(demo.stdout).toContain("nothing to install\n");
      expect(test.stdout).toContain(`  to install  promtool: ${PROMTOOL_WHY}\n`);
      expect(test.stdout).toContain(`  to install  haproxy: ${HAPROXY_WHY}\n`);
      expect(test.stdout).toContain(
        "  apt-get update && apt-get install -y --no-install-recommends prometheus haproxy\n",
      );
    },
  );
});

describe("scripts/system-deps when it cannot install", () => {
  it("not root, ffmpeg missing: exit 1 with what is missing, why, and the apt and Homebrew commands", async () => {
    const system = await fakeSystem(["bash", "nats-server", "fc-list"]);
    const run = await systemDeps(["demo"], { PATH: system.bin }, "nobody");
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toBe(
      [
        "system-deps: the demo needs system packages that are missing (not root, so not installing them):",
        `  ffmpeg: ${FFMPEG_WHY}`,
        "Install them, then run this again. Debian or Ubuntu:",
        "  sudo apt-get update && sudo apt-get install -y ffmpeg",
        "macOS:",
        "  brew install ffmpeg",
        "",
      ].join("\n"),
    );
    expect(await system.aptCalls()).toEqual([]);
  });

  asRoot(
    "root without apt-get and without dpkg (macOS-like), test profile: every command, Swift marked Linux-only",
    async () => {
      const system = await fakeSystem(["bash"], null);
      const run = await systemDeps(
        ["test"],
        { PATH: system.bin, NATS_SERVER_BIN: join(system.bin, "nats-server") },
        "root",
      );
      expect(run).toMatchObject({ code: 1, stdout: "" });
      expect(run.stderr).toBe(
        [
          "system-deps: the tests need system packages that are missing (no apt-get here, so not installing them):",
          `  ffmpeg: ${FFMPEG_WHY}`,
          "  nats-server: tests start their own nats-server (JWT auth, restarts) besides the shared NATS",
          `  fonts-noto-core: ${FONTS_WHY}`,
          `  OpenStack Swift: ${SWIFT_WHY}`,
          `  chromium: ${CHROMIUM_WHY}`,
          `  promtool: ${PROMTOOL_WHY}`,
          `  haproxy: ${HAPROXY_WHY}`,
          "Install them, then run this again. Debian or Ubuntu:",
          `  apt-get update && apt-get install -y ffmpeg nats-server chromium && apt-get install -y --no-install-recommends fonts-noto-core ${SWIFT_PACKAGES} prometheus haproxy`,
          "macOS:",
          "  brew install ffmpeg nats-server prometheus haproxy && brew install --cask font-noto-naskh-arabic chromium",
          "  (OpenStack Swift is not on Homebrew: the tests that need it run on Linux only)",
          "",
        ].join("\n"),
      );
    },
  );
});

describe("scripts/system-deps with everything present", () => {
  async function expectSilentAndFast(user: "root" | "nobody") {
    const system = await fakeSystem(EVERY_TOOL);
    const run = await systemDeps(["test"], { PATH: system.bin }, user);
    expect(run).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(run.milliseconds).toBeLessThan(1000);
    expect(await system.aptCalls()).toEqual([]);
  }

  asRoot("as root: the test profile exits 0 in well under a second and prints nothing", () =>
    expectSilentAndFast("root"),
  );

  it("as uid 65534: the same", () => expectSilentAndFast("nobody"));
});

describe("scripts/system-deps: nats-server", () => {
  it("demo: not needed while a NATS answers at NATS_URL", async () => {
    const natsUrl = inject("natsUrl");
    const system = await fakeSystem(["bash", "sleep", "ffmpeg", "ffprobe", "fc-list"]);
    const env = { PATH: system.bin, NATS_URL: natsUrl, NATS_SERVER_BIN: join(system.bin, "nats-server") };
    const plan = await systemDeps(["--dry-run", "demo"], env, "nobody");
    expect(plan.stdout).toBe(
      [
        "system-deps demo (dry run, nothing changes):",
        "  present     ffmpeg and ffprobe",
        `  present     NATS at ${new URL(natsUrl).host} (the demo uses it: no nats-server needed)`,
        FONTS_PRESENT,
        "nothing to install",
        "",
      ].join("\n"),
    );
    const run = await systemDeps(["demo"], env, "nobody");
    expect(run).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  it("demo: needed when NATS_URL points at a closed port (credentials in the URL are not shown)", async () => {
    const port = await freePort();
    const system = await fakeSystem(["bash", "sleep", "ffmpeg", "ffprobe", "fc-list"]);
    const env = {
      PATH: system.bin,
      NATS_URL: `nats://user:secret@127.0.0.1:${port}`,
      NATS_SERVER_BIN: join(system.bin, "nats-server"),
    };
    const run = await systemDeps(["demo"], env, "nobody");
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toContain(
      `  nats-server: nothing answers at NATS_URL (127.0.0.1:${port}), so the demo starts its own\n`,
    );
    expect(run.stderr).toContain("  brew install nats-server\n");
    expect(run.stderr).not.toContain("secret");
  });

  it("test: needed even while a NATS answers (tests start private servers)", async () => {
    const system = await fakeSystem(EVERY_TOOL.filter((tool) => tool !== "nats-server"));
    const env = {
      PATH: system.bin,
      NATS_URL: inject("natsUrl"),
      NATS_SERVER_BIN: join(system.bin, "nats-server"),
    };
    const run = await systemDeps(["test"], env, "nobody");
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toContain(
      "  nats-server: tests start their own nats-server (JWT auth, restarts) besides the shared NATS\n",
    );
  });
});

describe("scripts/system-deps as root with apt-get", () => {
  asRoot(
    "installs what is missing: one line saying why, apt-get update once, quiet and non-interactive",
    async () => {
      const system = await fakeSystem(["bash", "nats-server", "fc-list"], {
        installs: ["ffmpeg", "ffprobe"],
      });
      const run = await systemDeps(["demo"], { PATH: system.bin }, "root");
      expect(run).toEqual({
        code: 0,
        stdout: `installing ffmpeg: ${FFMPEG_WHY}\n`,
        stderr: "",
        milliseconds: run.milliseconds,
      });
      expect(await system.aptCalls()).toEqual([
        "DEBIAN_FRONTEND=noninteractive update -qq",
        "DEBIAN_FRONTEND=noninteractive install -y -qq ffmpeg",
      ]);
    },
  );

  asRoot("Swift goes in without recommended packages; still missing after the install: exit 1", async () => {
    // No dpkg-query on this PATH, so Swift never shows up as installed.
    const system = await fakeSystem([
      "bash",
      "ffmpeg",
      "ffprobe",
      "nats-server",
      "chromium",
      "promtool",
      "haproxy",
      "fc-list",
    ]);
    const run = await systemDeps(["test"], { PATH: system.bin }, "root");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`installing OpenStack Swift (${SWIFT_PACKAGES}): ${SWIFT_WHY}\n`);
    expect(run.stderr).toBe(
      `system-deps: still missing after apt-get install:\n  OpenStack Swift: ${SWIFT_WHY}\n`,
    );
    expect(await system.aptCalls()).toEqual([
      "DEBIAN_FRONTEND=noninteractive update -qq",
      `DEBIAN_FRONTEND=noninteractive install -y -qq --no-install-recommends ${SWIFT_PACKAGES}`,
    ]);
  });

  asRoot("a failing apt-get: its output is shown and the script exits 1", async () => {
    const system = await fakeSystem(["bash", "nats-server", "fc-list"], {
      fails: "E: Unable to locate package ffmpeg",
    });
    const run = await systemDeps(["demo"], { PATH: system.bin }, "root");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`installing ffmpeg: ${FFMPEG_WHY}\n`);
    expect(run.stderr).toBe(
      "E: Unable to locate package ffmpeg\nsystem-deps: apt-get install -y -qq ffmpeg failed with exit code 100\n",
    );
  });
});

describe("scripts/system-deps: a font for Persian, Dari and Pashto", () => {
  it("without fontconfig or such a font, both profiles ask for fonts-noto-core (no recommends) and say why", async () => {
    const system = await fakeSystem(["bash", "nats-server", "ffmpeg", "ffprobe"]);
    const run = await systemDeps(["--dry-run", "demo"], { PATH: system.bin }, "nobody");
    expect(run.stdout).toBe(
      [
        "system-deps demo (dry run, nothing changes):",
        "  present     ffmpeg and ffprobe",
        "  present     nats-server",
        `  to install  fonts-noto-core: ${FONTS_WHY}`,
        "not root: a run without --dry-run stops with exit code 1 and asks for:",
        "  sudo apt-get update && sudo apt-get install -y --no-install-recommends fonts-noto-core",
        "  brew install --cask font-noto-naskh-arabic",
        "",
      ].join("\n"),
    );
  });

  it.each(["ټ", "ډ", "ړ", "ښ", "ږ", "ګ", "ڼ", "ۍ", "ې"])(
    "fc-list finds a font on this machine for %s",
    async (letter) => {
      const codePoint = (letter.codePointAt(0) as number).toString(16);
      const fonts = await runProcess(locate("fc-list"), [`:charset=${codePoint}`, "family"], { env: {} });
      expect(fonts.code).toBe(0);
      expect(fonts.stdout).toMatch(/Noto (Naskh|Sans) Arabic/);
    },
  );
});

describe("scripts/system-deps usage", () => {
  it.each([[[]], [["demo", "test"]], [["--quiet", "demo"]]])("%j: usage on stderr, exit 2", async (args) => {
    const run = await systemDeps(args, { PATH: "/usr/bin:/bin" }, "nobody");
    expect(run).toMatchObject({
      code: 2,
      stdout: "",
      stderr: "usage: scripts/system-deps [--dry-run] demo|test\n",
    });
  });
});
