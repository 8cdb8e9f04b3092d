/**
 * The Admin console's page in headless Chromium (Debian's, driven by playwright-core), one
 * operator's session from sign-in to sign-out: sign in through the provider's pages, submit a
 * job through the form, watch its progress bar move and the job complete, cancel another, drain
 * a Worker, issue an enrollment token (shown once), lose the Manager and see the polling notice
 * then the recovery, sign out (a view's 401 on the way out does not sign it in again; the
 * provider ends its session without asking, so signing in again asks for the password) and see
 * `/api/events` answer 401; an account without a role lands on its account view; the language
 * switch turns the console to Pashto, right to left. axe-core checks every view.
 *
 * The Worker is protocol-level (tests/harness/protocol-worker.ts): it takes the lease, reports
 * progress on core NATS as the agent does, and completes with real objects in s3rver, so the
 * Manager promotes the outputs; a real ffmpeg run would only make the test slower. The steps
 * share one signed-in page and run in order. Screenshots of each step go to
 * `$TMPDIR/tjm-admin-screens-<run>`; their paths are printed.
 */
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import {
  encodeMessage,
  type LeaseCommand,
  PROTOCOL_VERSION,
  type Progress,
  ProgressSchema,
  subjects,
} from "@tjm/protocol";
import { type Browser, chromium, type Page, type Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ids } from "../../admin/src/page/element-ids.js";
import { completeLease } from "../faults/completion.ts";
import type { TestAccount } from "../harness/identity.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";
import { TestAdmin } from "./admin-harness.ts";
import { CHROMIUM, seriousViolations, switchLanguage } from "./chromium.ts";

const LOST_NOTICE = "Live updates lost — polling every 10 s";

let s3: S3Server;
let admin: TestAdmin;
let worker: ProtocolWorker;
let operator: TestAccount;
let projectId: string;
let browser: Browser;
let page: Page;
let screens: string;
const cspViolations: string[] = [];
const foreignRequests: string[] = [];

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  admin = await TestAdmin.start({
    manager: { storage: s3.settings, heartbeatIntervalMs: 300 },
    cuttableManager: true,
  });
  ({ projectId } = await admin.manager.createProject());
  worker = await ProtocolWorker.start(admin.manager, { heartbeatMs: 200 });
  operator = await admin.operator();
  screens = join(tmpdir(), `tjm-admin-screens-${Date.now()}`);
  await mkdir(screens, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM });
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    permissions: ["clipboard-read", "clipboard-write"],
  });
  page = await context.newPage();
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) cspViolations.push(message.text());
  });
  // Navigations go to the provider to sign in and out; everything a console page loads or
  // calls must stay on the console's origin.
  page.on("request", (request) => {
    const from = request.frame().url();
    if (!request.isNavigationRequest() && from.startsWith(admin.baseUrl)) {
      if (new URL(request.url()).origin !== admin.baseUrl) foreignRequests.push(request.url());
    }
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await admin?.close();
  await s3?.stop();
});

async function screenshot(step: string): Promise<void> {
  const path = join(screens, `${step}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
}

/** How long one step through the provider's pages may take on a loaded machine. */
const STEP_MS = 20_000;

/** Runs a step; when it fails, the error names the step and the page it was on, with a screenshot. */
async function step(name: string, action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
  } catch (error) {
    const path = join(screens, `failed-${name.replace(/\W+/g, "-")}.png`);
    await page.screenshot({ path, fullPage: true, timeout: 5000 }).catch(() => undefined);
    throw new Error(`${name}: not reached from ${page.url()} (screenshot: ${path})`, { cause: error });
  }
}

async function expectAccessible(view: string): Promise<void> {
  expect(await seriousViolations(page), `axe on ${view}`).toEqual([]);
}

const stateShown = () => page.locator('[data-field="state"]').textContent();
const progressValue = () => page.locator("#job-progress progress").getAttribute("value");

/** What the agent publishes on core NATS while ffmpeg runs. */
function publishProgress(lease: LeaseCommand, percent: number): void {
  const progress: Progress = {
    protocolVersion: PROTOCOL_VERSION,
    workerId: worker.workerId,
    instanceId: worker.worker.instanceId,
    attemptId: lease.attemptId,
    fencingToken: lease.fencingToken,
    percent,
    fps: 48,
    bitrateKbps: 1800,
    speed: 1.9,
    etaSeconds: Math.round((100 - percent) / 5),
    outTimeMs: percent * 100,
    at: new Date().toISOString(),
  };
  worker.nc.publish(
    subjects.workerProgress(admin.manager.subjectPrefix, worker.workerId),
    encodeMessage(ProgressSchema, progress),
  );
}

describe("an operator's session in the console", () => {
  it("signs in through the provider's pages and lands on the jobs", async () => {
    await page.goto(`${admin.baseUrl}/jobs`);
    expect(new URL(page.url()).pathname).toMatch(/^\/oidc\/interaction\//);
    await page.getByLabel(/e-mail/i).fill(operator.email);
    await page.getByLabel(/password/i).fill(operator.password);
    await page.getByRole("button", { name: /sign in/i }).click();
    await page.waitForURL(`${admin.baseUrl}/jobs`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Jobs");
    await expect.poll(() => page.locator(`#${ids.pagerPosition}`).textContent()).toMatch(/of 0$/);
    await screenshot("01-jobs-after-sign-in");
    await expectAccessible("the jobs list");

    // The keyboard reaches the skip link, then the navigation, each with a visible focus ring.
    const stops = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press("Tab");
      stops.push(
        await page.evaluate(() => {
          const focused = document.activeElement as HTMLElement;
          return `${focused.textContent?.trim()} (${getComputedStyle(focused).outlineStyle})`;
        }),
      );
    }
    expect(stops).toEqual(["Skip to the content (solid)", "Jobs (solid)", "Submit a job (solid)"]);
  });

  let jobId: string;

  /** Fills the form's one output with the sample plan's, `height` aside. */
  async function fillSampleOutput(height: number): Promise<void> {
    await page.getByLabel("Project").selectOption(projectId);
    await page.getByLabel("Input (s3://bucket/key)").fill("s3://media-in/movies/42/source.mov");
    await page.locator("#output-0-id").fill("720p");
    await page.locator("#output-0-destinationUri").fill("s3://media-out/movies/42/720p.mp4");
    await page.locator("#output-0-video-height").fill(String(height));
  }

  it("shows each 400 detail at its path in the submit form", async () => {
    await page.getByRole("link", { name: "Submit a job" }).click();
    await page.waitForURL(`${admin.baseUrl}/submit`);
    await expect.poll(() => page.locator("#project-id option").count()).toBe(2);
    // An odd height passes the form and fails the Manager's plan rules.
    await fillSampleOutput(721);
    await page.getByRole("button", { name: "Submit the job" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toMatch(/^The Manager refused the job \(1 problem\)/);
    expect(await page.locator("#output-0-video-height-errors li").allTextContents()).toEqual([
      "height must be an even number",
    ]);
    expect(await page.locator("#output-0-video-height").getAttribute("aria-invalid")).toBe("true");
    await screenshot("02-submit-400-details");
    await expectAccessible("the submit form with errors");
  });

  it("submits a job through the form, shows its progress bar moving, and it completes", async () => {
    await fillSampleOutput(720);
    await page.getByRole("button", { name: "Submit the job" }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    jobId = new URL(page.url()).pathname.split("/").at(-1) as string;
    await expect.poll(stateShown).toMatch(/QUEUED|RUNNING/);

    const lease = await worker.nextLease(jobId);
    await worker.report("accepted", lease);
    await expect.poll(stateShown, { timeout: 10_000 }).toBe("RUNNING");
    publishProgress(lease, 25);
    await expect.poll(progressValue, { timeout: 10_000 }).toBe("25");
    await expect
      .poll(() => page.locator("#job-progress .figures").textContent())
      .toMatch(/48 fps · 1\.90× · ETA 15 s/);
    await screenshot("03-job-progress-25");
    // The Manager passes on at most one progress event a second per job.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    publishProgress(lease, 70);
    await expect.poll(progressValue, { timeout: 10_000 }).toBe("70");
    await screenshot("04-job-progress-70");
    await expectAccessible("a running job");

    await completeLease(worker, lease, s3.client());
    await expect.poll(stateShown, { timeout: 15_000 }).toBe("COMPLETED");
    expect(await page.locator("#reason-retry").textContent()).toBe("Retry: only failed jobs can be retried");
    expect(await page.locator('[data-action="retry"]').isDisabled()).toBe(true);
    expect(await page.locator("#job-plan").textContent()).toContain('"outputs"');
    await screenshot("05-job-completed");
    await expectAccessible("a completed job");
  });

  it("filters the jobs by pool and cancels a queued job", async () => {
    // No nvidia Worker: the job stays QUEUED, and a cancel ends it at once.
    const queued = await admin.manager.submitJob(
      sampleSubmission(projectId, { requirements: { requiredCapabilities: ["h264_nvenc"] } }),
    );
    await page.getByRole("link", { name: "Jobs", exact: true }).click();
    await page.waitForURL(`${admin.baseUrl}/jobs`);
    await page.getByLabel("Worker pool").selectOption("nvidia");
    await expect.poll(() => page.locator("#jobs-table tbody tr").count()).toBe(1);
    expect(await page.locator("#jobs-table tbody tr").getAttribute("data-job-id")).toBe(queued);
    expect(page.url()).toContain("workerPool=nvidia");
    await screenshot("06-jobs-filtered-nvidia");
    await expectAccessible("the filtered jobs list");

    await page.getByRole("link", { name: `Job ${queued}` }).click();
    await expect.poll(stateShown).toBe("QUEUED");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(stateShown, { timeout: 10_000 }).toBe("CANCELLED");
    expect(await page.locator("#reason-cancel").textContent()).toBe("Cancel: the job is already cancelled");
    await screenshot("07-job-cancelled");
    expect((await admin.manager.job(queued)).state).toBe("CANCELLED");
  });

  it("drains a Worker after confirming", async () => {
    await page.getByRole("link", { name: "Workers" }).click();
    await page.waitForURL(`${admin.baseUrl}/workers`);
    const row = page.locator(`tr[data-worker-id="${worker.workerId}"]`);
    await expect.poll(() => row.count()).toBe(1);
    await expectAccessible("the Workers list");
    page.once("dialog", (dialog) => void dialog.accept());
    await row.locator('[data-action="drain"]').click();
    // It holds nothing: drained at once, shown as DRAINED only.
    await expect
      .poll(() => row.locator("[data-condition]").allTextContents(), { timeout: 10_000 })
      .toEqual([expect.stringMatching(/^DRAINED since /)]);
    expect(await row.locator('[data-action="drain"]').isDisabled()).toBe(true);
    await screenshot("08-worker-draining");
    await expectAccessible("the Workers list with a draining Worker");
  });

  it("issues an enrollment token and shows it only once", async () => {
    await page.getByRole("link", { name: "Enrollment tokens" }).click();
    await page.waitForURL(`${admin.baseUrl}/enrollment`);
    await page.getByLabel(/^Label/).fill("render-07");
    const answered = page.waitForResponse((response) =>
      response.url().endsWith("/api/operations/enrollment-tokens"),
    );
    await page.getByRole("button", { name: "Issue a token" }).click();
    const response = await answered;
    expect(response.status()).toBe(201);
    expect(response.headers()["cache-control"]).toBe("no-store");
    // The page fills the field after the answer arrives: wait for it, not for the answer.
    await expect
      .poll(async () => (await page.getByLabel("Enrollment token").inputValue()).length)
      .toBeGreaterThan(20);
    const token = await page.getByLabel("Enrollment token").inputValue();
    expect(await page.locator("#token-details").textContent()).toContain("label: render-07");
    await page.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.locator("#copy-result").textContent()).toBe("Copied to the clipboard.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await screenshot("09-enrollment-token-shown");
    await expectAccessible("the issued enrollment token");

    await page.reload();
    expect(await page.locator("#issued-token").isHidden()).toBe(true);
    expect(await page.content()).not.toContain(token);
  });

  it("says it polls while the Manager is away, and refetches once it is back", async () => {
    await page.getByRole("link", { name: "Jobs", exact: true }).click();
    await page.waitForURL(`${admin.baseUrl}/jobs`);
    await page.getByLabel("Worker pool").selectOption("");
    await expect.poll(() => page.locator("#jobs-table tbody tr[data-job-id]").count()).toBe(2);
    await admin.cutManager();
    await expect.poll(() => page.locator("#live-notice").textContent(), { timeout: 5000 }).toBe(LOST_NOTICE);
    // Submitted while the console cannot see the Manager: only a refetch can show it.
    const submittedMeanwhile = await admin.manager.submitJob(sampleSubmission(projectId));
    await screenshot("10-live-updates-lost");
    await expectAccessible("the jobs list while polling");

    await admin.restoreManager();
    await expect.poll(() => page.locator("#live-notice").textContent(), { timeout: 15_000 }).toBe("");
    await expect.poll(() => page.locator(`tr[data-job-id="${submittedMeanwhile}"]`).count()).toBe(1);
    await screenshot("11-live-updates-back");
  }, 30_000);

  it("switches to Pashto: right to left, its texts from the server and the script, Latin digits", async () => {
    await switchLanguage(page, "Language", "پښتو", "ps");
    expect(await page.locator("html").getAttribute("lang")).toBe("ps");
    expect(await page.locator("html").getAttribute("dir")).toBe("rtl");
    expect(await page.evaluate(() => getComputedStyle(document.body).direction)).toBe("rtl");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("دندې");
    // Mirrored: the brand starts the header on the right, the sign-out button is on its left.
    const brand = await page.locator(".brand").boundingBox();
    const signOut = await page.getByRole("button", { name: "وتل" }).boundingBox();
    expect(brand && signOut && brand.x > signOut.x).toBe(true);
    // The script's texts: the pager's position and the states, in Pashto with Latin digits.
    await expect
      .poll(() => page.locator(`#${ids.pagerPosition}`).textContent())
      .toMatch(/^دندې 1–3 له 3 څخه$/);
    const states = await page.locator("#jobs-table tbody .state").allTextContents();
    expect(states).toContain("لغوه شوې");
    const submitted = await page.locator("#jobs-table tbody tr td:nth-child(6)").first().textContent();
    // Chromium has no Pashto dates of its own: the catalogue's month names, Gregorian, Latin digits.
    expect(submitted).toMatch(/^\d{1,2} \p{Script=Arabic}+ \d{4}، \d{2}:\d{2}:\d{2} \(.+\)$/u);
    expect(await page.locator("body").innerText()).not.toMatch(/[\u06f0-\u06f9\u0660-\u0669]/);
    await screenshot("11b-jobs-in-pashto-rtl");
    await expectAccessible("the jobs list in Pashto");

    await page.locator("#jobs-table tbody a").first().click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    await expect.poll(() => page.locator("#job-summary dt").first().textContent()).toBe("حالت");
    expect(await stateShown()).not.toMatch(/[A-Z]/);
    await screenshot("11c-job-in-pashto-rtl");
    await expectAccessible("a job in Pashto");

    await switchLanguage(page, "ژبه", "English", "en");
    expect(page.url()).toMatch(/\/jobs\/[0-9a-f-]{36}$/);
    expect(await page.locator("html").getAttribute("dir")).toBe("ltr");
    await page.goto(`${admin.baseUrl}/jobs`);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Jobs");
  });

  it("signs out without the provider asking, the old session's /api/events answers 401, and signing in again asks for the password", async () => {
    const cookie = (await page.context().cookies(admin.baseUrl)).find((c) => c.name === admin.cookieName);
    expect(cookie?.httpOnly).toBe(true);
    // A view's request that the sign-out overtakes answers 401 (the session is gone) while the
    // browser is on its way to the provider: that 401 must not send it to sign in again, which
    // would bring it straight back signed in. The request is held until the provider is asked.
    let holdViewRequest: (route: Route) => void = () => undefined;
    const viewRequest = new Promise<Route>((resolve) => {
      holdViewRequest = resolve;
    });
    await page.route(`${admin.baseUrl}/api/operations/**`, (route) => holdViewRequest(route), { times: 1 });
    // A string, so that vitest leaves the page's dynamic import alone; `void`, so that the
    // evaluation does not wait for the request it holds.
    await page.evaluate(
      `void import("/assets/api.js").then((api) => api.getJson("/api/operations/jobs").catch(() => undefined))`,
    );
    const heldViewRequest = await viewRequest;
    const { end_session_endpoint } = await (
      await fetch(`${admin.manager.issuerUrl}/.well-known/openid-configuration`)
    ).json();
    await page.route(
      (url) => url.href.startsWith(end_session_endpoint),
      async (route) => {
        await heldViewRequest.fulfill({ response: await heldViewRequest.fetch() });
        await page.waitForRequest(/\/auth\/sign-in/, { timeout: 2000 }).catch(() => undefined);
        await route.continue().catch(() => undefined);
      },
      { times: 1 },
    );
    await page.getByRole("button", { name: "Sign out" }).click();
    // The console's own hint names the provider's session: the provider ends it without its
    // confirmation page. Each step is bounded, so a stall names its step and page.
    await step("the console's signed-out page, no confirmation on the way", () =>
      page.waitForURL(`${admin.baseUrl}/auth/signed-out`, { timeout: STEP_MS }),
    );
    await screenshot("12-signed-out");
    await expectAccessible("the signed-out page");
    const events = await fetch(`${admin.baseUrl}/api/events`, {
      headers: { cookie: `${admin.cookieName}=${cookie?.value}` },
    });
    expect(events.status).toBe(401);
    expect((await page.request.get(`${admin.baseUrl}/api/events`)).status()).toBe(401);
    // The provider's session ended too: a sign-in on this browser asks for the password again.
    await page.goto(`${admin.baseUrl}/auth/sign-in?returnTo=%2Fjobs`);
    await step("the provider's sign-in page", () =>
      page.getByLabel(/password/i).waitFor({ timeout: STEP_MS }),
    );
  }, 60_000);

  it("signs in an account without a role, which lands on its account view with no operations offered", async () => {
    const plain = await admin.account([]);
    await step("the provider's sign-in page", async () => {
      await page.goto(`${admin.baseUrl}/jobs`, { timeout: STEP_MS });
      await page.getByLabel(/e-mail/i).fill(plain.email, { timeout: STEP_MS });
    });
    await page.getByLabel(/password/i).fill(plain.password);
    await page.getByRole("button", { name: /sign in/i }).click();
    await step("the console's account view", () =>
      page.waitForURL(`${admin.baseUrl}/account`, { timeout: STEP_MS }),
    );
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Your account");
    const navigation = page.getByRole("navigation", { name: "Main" });
    expect(await navigation.getByRole("link").allTextContents()).toEqual(["Your account"]);
    await expect.poll(() => page.locator("#offered").textContent()).toMatch(/Operations .* are not offered/);
    await screenshot("13-account-without-a-role");
    await expectAccessible("the account view");
  }, 60_000);

  it("loaded nothing from another origin and broke no CSP rule", () => {
    expect(foreignRequests).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
