import { existsSync } from "node:fs";
import { runScript } from "@tjm/devstack/manager-process";
import { canConnect } from "@tjm/devstack/services";
import { deleteStreams } from "@tjm/devstack/streams";
import { describe, expect, inject, it } from "vitest";
import { createSql } from "../manager/src/platform/db.ts";
import { testServices } from "./harness/manager.ts";

describe("npm run demo", () => {
  it("runs a real job end to end (s3rver, Manager, a Worker agent, ffmpeg) and prints what ffprobe says of its outputs", async () => {
    const services = testServices();
    const schema = `${inject("schemaPrefix")}demo_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const result = await runScript(["demo", "--", "--once"], {
      DATABASE_URL: services.databaseUrl,
      NATS_URL: services.natsUrl,
      DEMO_SCHEMA: schema,
      NATS_SUBJECT_PREFIX: schema,
      PORT: "0",
    });
    const sql = createSql({ url: services.databaseUrl, schema: "public", poolMax: 1 });
    await sql`drop schema if exists ${sql(schema)} cascade`;
    await sql.end();
    await deleteStreams(services.natsUrl, schema);
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.code, output).toBe(0);

    const { stdout } = result;
    expect(stdout).toMatch(/Manager on Node at http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toMatch(/S3: s3rver at http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toMatch(/Worker agent on Bun \(pid \d+\)/);
    // Progress from the SSE job.progress events: plain lines, as stdout is not a terminal.
    expect(stdout).toMatch(/^job [0-9a-f]{8} attempt 1: +\d+%/m);
    expect(stdout).toMatch(/^Job [0-9a-f-]{36} COMPLETED after [\d.]+ s \(1 attempt\)\./m);

    const outputs = [
      ...stdout.matchAll(
        /^ {2}(s3:\/\/\S+) .*\n {4}ffprobe: duration ([\d.]+) s, video (\w+) (\d+)x(\d+), audio (\w+) /gm,
      ),
    ].map(([, uri, duration, video, width, height, audio]) => ({
      uri,
      duration: Number(duration),
      video,
      width: Number(width),
      height: Number(height),
      audio,
    }));
    expect(outputs, stdout).toHaveLength(2);
    const [mp4, webm] = outputs;
    // 20 s clip less the removed 5-8 s.
    expect(mp4).toMatchObject({ video: "h264", width: 640, height: 360, audio: "aac" });
    expect(mp4?.uri).toMatch(/^s3:\/\/media-out\/demo\/.+\/360p\.mp4$/);
    expect(Math.abs((mp4?.duration ?? 0) - 17)).toBeLessThanOrEqual(0.2);
    expect(webm).toMatchObject({ video: "vp9", width: 426, height: 240, audio: "opus" });
    expect(webm?.uri).toMatch(/^s3:\/\/media-out\/demo\/.+\/240p\.webm$/);
    expect(Math.abs((webm?.duration ?? 0) - 17)).toBeLessThanOrEqual(0.2);

    expect(stdout).toMatch(/Manifest \(s3:\/\/media-out\/demo\/.+\/manifest\.json\):\n\{\n {2}"jobId": /);
    expect(stdout).toMatch(/API docs \(Scalar\): +http:\/\/127\.0\.0\.1:\d+\/api\/docs/);
    // --once: everything it started is stopped again, its temp files removed.
    expect(stdout).not.toContain("Serving until Ctrl-C");
    expect(stdout).toMatch(
      /Cleaning up: the event stream, the Worker agent, the Manager, s3rver, temp files, the OIDC issuer\.\nDone\.\n$/,
    );
    const agentPid = Number(/Worker agent on Bun \(pid (\d+)\)/.exec(stdout)?.[1]);
    expect(() => process.kill(agentPid, 0)).toThrow();
    const managerUrl = /Manager on Node at (\S+)/.exec(stdout)?.[1] as string;
    expect(await canConnect(managerUrl)).toBe(false);
    for (const dir of [/data in (\S+)\)/.exec(stdout)?.[1], /Downloaded copies: (\S+)/.exec(stdout)?.[1]]) {
      expect(dir).toMatch(/^\/.+/);
      expect(existsSync(dir as string), dir).toBe(false);
    }
  }, 90_000);
});
