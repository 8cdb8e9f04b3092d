/**
 * The demo's Admin console: `npm run admin` as a child process of its own (its own process group,
 * so npm and the console stop together), at `http://127.0.0.1:<port>`: the host of every other
 * URL the demo prints, and a loopback address, where browsers accept its `__Host-` session cookie
 * over plain http.
 */
import { spawn } from "node:child_process";
import { REPOSITORY_ROOT } from "@tjm/devstack/manager-process";
import { stopProcessGroup } from "@tjm/devstack/run-process";
import { canConnect, freePort, waitFor } from "@tjm/devstack/services";

/** The console's usual port, so the printed URL is easy to remember. */
const CONSOLE_PORT = 8090;
const START_TIMEOUT_MS = 60_000;
/** SIGTERM first; a group still alive after this gets SIGKILL. */
const STOP_GRACE_MS = 10_000;

export interface AdminConsole {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** What the console is told besides its address (admin/src/config.ts). */
export interface AdminConsoleSettings {
  DATABASE_URL: string;
  DATABASE_SCHEMA: string;
  MANAGER_URL: string;
  OIDC_ISSUER_URL: string;
  OIDC_OPERATIONS_ADMIN_AUDIENCE: string;
  ADMIN_CLIENT_ID: string;
  ADMIN_CLIENT_SECRET: string;
  ADMIN_SESSION_KEY: string;
}

/**
 * The console's address: where an earlier run's console was registered, when that port is free
 * (its client and a browser's session carry over), else 8090 when free, else any free port.
 */
export async function chooseConsoleUrl(previousOrigin: string | undefined): Promise<string> {
  const previousPort = previousOrigin === undefined ? undefined : Number(new URL(previousOrigin).port);
  for (const port of [previousPort, CONSOLE_PORT]) {
    if (port && !(await canConnect(`http://127.0.0.1:${port}`))) return consoleUrl(port);
  }
  return consoleUrl(await freePort());
}

const consoleUrl = (port: number) => `http://127.0.0.1:${port}`;

/** Starts the console at `url` and resolves once it answers `GET /api/session` with 401 (no session yet). */
export async function startAdminConsole(url: string, settings: AdminConsoleSettings): Promise<AdminConsole> {
  const port = new URL(url).port;
  const child = spawn("npm", ["run", "--silent", "admin"], {
    cwd: REPOSITORY_ROOT,
    env: {
      ...process.env,
      ...settings,
      ADMIN_PUBLIC_URL: url,
      // Loopback only: the demo's secrets are on screen and in a file.
      HOST: "127.0.0.1",
      PORT: port,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: Ctrl-C reaches the demo, which stops the console in order.
    detached: true,
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk;
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const pid = child.pid as number;
  const stop = () => stopProcessGroup(pid, closed, STOP_GRACE_MS);
  try {
    await waitFor(
      `the Admin console at ${url}`,
      async () => {
        if (child.exitCode !== null)
          throw new Error(`the Admin console exited with ${child.exitCode}:\n${output}`);
        const response = await fetch(`${url}/api/session`).catch(() => undefined);
        await response?.body?.cancel();
        return response?.status === 401;
      },
      START_TIMEOUT_MS,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, pid, stop };
}
