/**
 * The console as an operator walks it, in headless Chromium (Debian's, driven by
 * playwright-core) against a real Manager, a real agent running ffmpeg and s3rver: pick a
 * project, start from a template (every missing field named at once), submit the tiniest real
 * job, watch it go live to COMPLETED, open its detail with the outputs, the manifest and the
 * log, see one progress figure in the list, the summary and the attempt; drain the Worker
 * (confirmed), cancel a queued job (confirmed, after declining once), undrain the Worker, see a
 * job it failed with its failure in the summary; a job that does not exist is one message. axe-core checks each view (no serious or critical
 * violation), and every step leaves a screenshot in test-artifacts/console-walkthrough/
 * (gitignored), kept after the run.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import axe from "axe-core";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestAccount } from "../harness/identity.ts";
import { putClip, startTestAgent, tinyPlan } from "../harness/media-jobs.ts";
import { TestAdmin } from "./admin-harness.ts";

const CHROMIUM = "/usr/bin/chromium";
const SCREENS = join(import.meta.dirname, "..", "..", "test-artifacts", "console-walkthrough");

let s3: S3Server;
let admin: TestAdmin;
let operator: TestAccount;
let projectId: string;
let scratch: Awaited<ReturnType<typeof agentDirs>>;
let workerId: string;
let agent: Awaited<ReturnType<typeof startTestAgent>>;
let browser: Browser;
let page: Page;
const cspViolations: string[] = [];

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  admin = await TestAdmin.start({ manager: { storage: s3.settings, heartbeatIntervalMs: 300 } });
  ({ projectId } = await admin.manager.createProject("walkthrough-studio", "trailers"));
  scratch = await agentDirs();
  // Side by side: the agent's start (its probe runs ffmpeg) is the longest.
  [agent, browser, operator] = await Promise.all([
    startTestAgent(admin.manager, scratch.root, "walker"),
    chromium.launch({ executablePath: CHROMIUM }),
    admin.operator(),
    putClip(s3, { bucket: "media-in", key: "tiny.mp4" }, 1, "160x120"),
    mkdir(SCREENS, { recursive: true }),
  ]);
  workerId = (await agent.waitForMessage("worker registered")).workerId as string;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: "UTC" });
  page = await context.newPage();
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) cspViolations.push(message.text());
  });
  // Every state and progress figure the job's page shows, recorded as it changes (the job is
  // over in a second or two: polling the page could miss RUNNING).
  await context.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { seen: string[] }).seen = seen;
    new MutationObserver(() => {
      const state = document.querySelector('[data-field="state"]')?.textContent;
      const progress = document.querySelector('[data-field="progress"]')?.textContent;
      const entry = `${state} ${progress}`;
      if (state && seen.at(-1) !== entry) seen.push(entry);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await killAgents();
  await admin?.close();
  await s3?.stop();
  await scratch?.cleanup();
});

async function screenshot(step: string): Promise<void> {
  await page.screenshot({ path: join(SCREENS, `${step}.png`), fullPage: true });
}

/** axe-core's serious and critical violations on the page as it is now. */
async function expectAccessible(view: string): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's CSP (no inline script) allows.
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const results = await (window as unknown as { axe: typeof axe }).axe.run(document, {
      resultTypes: ["violations"],
    });
    return results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      targets: violation.nodes.map((node) => node.target.join(" ")),
    }));
  });
  const serious = violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id} (${violation.impact}) at ${violation.targets.join(", ")}`);
  expect(serious, `axe on ${view}`).toEqual([]);
}

const text = (selector: string) => page.locator(selector).first().textContent();

/** Accepts (or declines) the next confirm() and answers its question. */
function nextConfirm(accept: boolean): Promise<string> {
  return new Promise((resolve) => {
    page.once("dialog", (dialog) => {
      resolve(dialog.message());
      void (accept ? dialog.accept() : dialog.dismiss());
    });
  });
}

describe("an operator walks the console", () => {
  let jobId: string;

  it("signs in, picks a project and a template, and is told every missing field at once", async () => {
    await page.goto(`${admin.baseUrl}/submit`);
    await page.getByLabel(/e-mail/i).fill(operator.email);
    await page.getByLabel(/password/i).fill(operator.password);
    await page.getByRole("button", { name: /sign in/i }).click();
    await page.waitForURL(`${admin.baseUrl}/submit`);
    expect(await page.locator('link[rel="icon"]').getAttribute("href")).toBe("/assets/favicon.svg");

    const projects = page.getByLabel("Project");
    await expect
      .poll(() => projects.locator("option").allTextContents())
      .toContain("walkthrough-studio / trailers");
    await projects.selectOption(projectId);
    await page.getByLabel("Start from a template").selectOption({ label: "H.264 ladder: 1080p, 720p, 480p" });
    expect(await page.locator("fieldset.output").count()).toBe(3);
    expect(await page.locator("#output-0-video-codec option").allTextContents()).toEqual([
      "No video",
      "h264",
      "hevc",
      "av1",
      "vp9",
    ]);
    expect(await page.locator("#output-0-video-preset").inputValue()).toBe("medium");

    // Three fields emptied: the form names all three before sending anything.
    await page.getByLabel("Input (s3://bucket/key)").fill("");
    await page.locator("#output-1-id").fill("");
    await page.locator("#output-2-destinationUri").fill("");
    await page.getByRole("button", { name: "Submit the job" }).click();
    await expect.poll(() => text("#submit-errors")).toMatch(/^The job was not sent \(3 problems\)/);
    expect(await page.locator("#input-uri-errors li").allTextContents()).toEqual([
      "an s3://bucket/key location is required",
    ]);
    expect(await page.locator("#output-1-id-errors li").allTextContents()).toEqual([
      "an output id is required",
    ]);
    expect(await page.locator("#output-2-destinationUri-errors li").count()).toBe(1);
    expect(await page.locator("#output-1-id").getAttribute("aria-invalid")).toBe("true");
    await screenshot("01-submit-missing-fields");
    await expectAccessible("the submit form with its field errors");
  });

  it("submits the tiniest real job and watches it go live to COMPLETED", async () => {
    const plan = tinyPlan("/media-out/walkthrough").executionPlan;
    const output = plan.outputs[0] as (typeof plan.outputs)[number];
    await page.getByLabel("Input (s3://bucket/key)").fill(plan.input.uri);
    await page.getByLabel(/^Manifest/).fill(plan.manifestUri);
    await page.locator('[data-remove-output="2"]').click();
    await page.locator('[data-remove-output="1"]').click();
    expect(await page.locator("fieldset.output legend").allTextContents()).toEqual(["Output 1"]);
    await page.locator("#output-0-id").fill(output.id);
    await page.locator("#output-0-destinationUri").fill(output.destinationUri);
    await page.locator("#output-0-video-height").fill(String(output.video.height));
    await page.locator("#output-0-video-preset").selectOption(output.video.preset);
    await page.locator("#output-0-audio-bitrateKbps").fill(String(output.audio.bitrateKbps));
    await page.getByRole("button", { name: "Submit the job" }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    jobId = new URL(page.url()).pathname.split("/").at(-1) as string;

    await expect.poll(() => text('[data-field="state"]'), { timeout: 30_000 }).toBe("COMPLETED");
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    // Live: the page went through the job's states without a reload, ending at 100 %.
    expect(seen.at(-1)).toBe("COMPLETED 100 %");
    // e.g. ["RUNNING —", "RUNNING 4 %", "RUNNING 100 %", "COMPLETED 100 %"]: "—" until the Worker reports.
    expect(seen.filter((entry) => entry.startsWith("RUNNING ")).length).toBeGreaterThan(0);
    expect(seen[0]).toMatch(/^(QUEUED|RUNNING) /);
    await screenshot("02-job-completed");
  });

  it("shows the outputs, the manifest, the log, the Worker and one progress figure", async () => {
    const row = page.locator('#outputs-table tr[data-output-id="tiny"]');
    await expect.poll(() => row.count()).toBe(1);
    const cells = await row.locator("th, td").allTextContents();
    expect(cells[0]).toBe("tiny");
    expect(cells[1]).toBe("s3://media-out/walkthrough/tiny.mp4");
    expect(cells[2]).toMatch(/^\d+\.\d KiB \([\d,]+ bytes\)$/);
    expect(cells[3]).toMatch(/^1 s$/);
    expect(cells[4]).toBe("192×144");
    expect(cells[5]).toBe("h264, aac");
    expect(JSON.parse((await text("#job-manifest")) ?? "")).toMatchObject({
      jobId,
      outputs: [{ id: "tiny", uri: "s3://media-out/walkthrough/tiny.mp4" }],
    });
    await expect.poll(() => page.locator("#attempt-log").isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await text("#attempt-log")).toMatch(/ffmpeg|frame=|Stream/);
    expect(await text("#log-status")).toMatch(/^Attempt 1, all [\d.]+ (bytes|KiB)/);

    const attempt = page.locator("#attempts-table tbody tr").first();
    const attemptCells = await attempt.locator("td").allTextContents();
    await expect
      .poll(() => attempt.locator(`[data-worker-id="${workerId}"]`).textContent())
      .toBe(`walker ${workerId.slice(0, 8)}`);
    expect(attemptCells[3]).toBe("100 %");
    expect(attemptCells[6]).toMatch(/UTC$/);
    expect(await text('[data-field="progress"]')).toBe("100 %");
    expect(await text("#job-summary")).toMatch(/Completed.*UTC/);
    // Unavailable actions look it: a dashed border and a not-allowed cursor.
    const retry = page.locator('[data-action="retry"]');
    expect(await retry.isDisabled()).toBe(true);
    expect(await retry.evaluate((button) => getComputedStyle(button).borderStyle)).toBe("dashed");
    expect(await retry.evaluate((button) => getComputedStyle(button).cursor)).toBe("not-allowed");
    await screenshot("03-job-detail-outputs-and-log");
    await expectAccessible("a completed job's detail");

    await page.getByRole("link", { name: "Jobs", exact: true }).click();
    await page.waitForURL(`${admin.baseUrl}/jobs`);
    const listed = page.locator(`#jobs-table tr[data-job-id="${jobId}"] td`);
    await expect.poll(() => listed.nth(4).textContent()).toBe("100 %");
  });

  it("drains the Worker after confirming: DRAINED shown once, its encoders listed", async () => {
    await page.getByRole("link", { name: "Workers" }).click();
    await page.waitForURL(`${admin.baseUrl}/workers`);
    const row = page.locator(`tr[data-worker-id="${workerId}"]`);
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator(".encoders-working").textContent()).toMatch(/^Working: .*libx264/);
    // Apart: each hardware encoder this host's self-test failed, with the Worker's reason.
    const registered = await (await admin.manager.request(`/api/v1/operations/workers/${workerId}`)).json();
    const failed = (registered.hardwareEncoders as { name: string; status: string; reason?: string }[])
      .filter((encoder) => encoder.status === "FAILED")
      .map((encoder) => `${encoder.name}: ${encoder.reason ?? "no reason given"}`);
    expect(await row.locator(".encoder-failed").allTextContents()).toEqual(failed);
    expect(await row.locator('[data-action="undrain"]').isDisabled()).toBe(true);
    const question = nextConfirm(true);
    await row.locator('[data-action="drain"]').click();
    expect(await question).toBe("Drain walker? It takes no new jobs and finishes the ones it holds.");
    await expect
      .poll(() => row.locator("[data-condition]").allTextContents(), { timeout: 10_000 })
      .toEqual([expect.stringMatching(/^DRAINED since .* UTC \(drain asked .* UTC\)$/)]);
    expect(await row.locator('[data-action="drain"]').isDisabled()).toBe(true);
    expect(await row.locator('[data-action="undrain"]').isDisabled()).toBe(false);
    await agent.waitForMessage("draining: this Worker takes no new leases");
    await screenshot("04-worker-drained");
    await expectAccessible("the Workers with a drained one");
  });

  it("cancels a queued job only once the operator confirms", async () => {
    // The one Worker is drained: the job waits in the queue.
    const queued = await admin.manager.submitJob({
      projectId,
      executionPlan: tinyPlan("/media-out/walkthrough-cancelled").executionPlan,
    });
    await page.goto(`${admin.baseUrl}/jobs/${queued}`);
    await expect.poll(() => text('[data-field="state"]')).toBe("QUEUED");
    const declined = nextConfirm(false);
    await page.locator('[data-action="cancel"]').click();
    expect(await declined).toMatch(/^Cancel job /);
    expect((await admin.manager.job(queued)).state).toBe("QUEUED");

    const accepted = nextConfirm(true);
    await page.locator('[data-action="cancel"]').click();
    await accepted;
    await expect.poll(() => text('[data-field="state"]'), { timeout: 10_000 }).toBe("CANCELLED");
    expect(await text("#job-summary")).toMatch(/Cancelled.*UTC/);
    const attemptCells = await page.locator("#attempts-table tbody tr td").allTextContents();
    expect(attemptCells[2]).toBe("Not dispatched");
    expect(attemptCells[6]).toBe("Did not start");
    await screenshot("05-job-cancelled");
    await expectAccessible("a cancelled job");
  });

  it("undrains the Worker after confirming, and the agent takes leases again", async () => {
    await page.getByRole("link", { name: "Workers" }).click();
    await page.waitForURL(`${admin.baseUrl}/workers`);
    const row = page.locator(`tr[data-worker-id="${workerId}"]`);
    await expect.poll(() => row.count()).toBe(1);
    const question = nextConfirm(true);
    await row.locator('[data-action="undrain"]').click();
    expect(await question).toBe("Undrain walker? It takes new jobs again.");
    await expect.poll(() => row.locator("[data-condition]").count(), { timeout: 10_000 }).toBe(0);
    await agent.waitForMessage("undrained: this Worker takes leases again");
    await screenshot("06-worker-undrained");
  });

  it("shows a failed job's failure and when it failed in the summary (run by the undrained Worker)", async () => {
    const plan = tinyPlan("/media-out/walkthrough-failed").executionPlan;
    const failing = await admin.manager.submitJob({
      projectId,
      executionPlan: { ...plan, input: { uri: "s3://media-in/no-such-clip.mp4" } },
    });
    await page.goto(`${admin.baseUrl}/jobs/${failing}`);
    await expect.poll(() => text('[data-field="state"]'), { timeout: 15_000 }).toBe("FAILED");
    expect(await text('[data-field="failure"]')).toMatch(/^INPUT_NOT_FOUND .*no-such-clip\.mp4/);
    expect(await text("#job-summary")).toMatch(/Failed.*UTC/);
    await screenshot("07-job-failed");
    await expectAccessible("a failed job");
  });

  it("says in one message that a job does not exist", async () => {
    const missing = crypto.randomUUID();
    await page.goto(`${admin.baseUrl}/jobs/${missing}`);
    await expect
      .poll(() => text("#view-status"))
      .toBe(`There is no job ${missing}. It may have been mistyped; see all jobs.`);
    expect(await page.locator("#job-sections").isHidden()).toBe(true);
    await screenshot("08-job-not-found");
    await expectAccessible("a job that does not exist");
    expect(cspViolations).toEqual([]);
  });
});
