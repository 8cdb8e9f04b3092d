/**
 * A host whose GPU has no NVENC engine (an H200), enrolled in the nvidia pool: the real agent
 * probes, registers and shows DEGRADED with the sentence that names its GPU. The GPU is the one
 * boundary this machine cannot have: ffmpeg is the labelled FAKE of worker-agent's probe fixtures,
 * printing Debian's recorded listings and replaying FFmpeg 8's recorded self-test output on an H200.
 */
import { fileURLToPath } from "node:url";
import { agentDirs, killAgents, startAgent } from "@tjm/devstack/agent-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { issueToken } from "../harness/workers.ts";
import { getWorker } from "../harness/workers-api.ts";

const PROBE_FIXTURES = new URL("../../worker-agent/src/probe/fixtures/", import.meta.url);
const FAKE_FFMPEG = fileURLToPath(new URL("fake-ffmpeg/ffmpeg", PROBE_FIXTURES));

describe("an nvidia Worker on a GPU without NVENC", () => {
  let manager: TestManager;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    manager = await TestManager.start();
  });
  afterAll(async () => {
    await killAgents();
    await Promise.all(cleanups.map((cleanup) => cleanup()));
    await manager?.close();
  });

  it("registers DEGRADED, its reason naming the GPU and the pool to use instead", async () => {
    const dirs = await agentDirs();
    cleanups.push(dirs.cleanup);
    const agent = startAgent({
      MANAGER_URL: manager.baseUrl,
      WORKER_STATE_DIR: dirs.stateDir,
      WORKER_WORK_DIR: dirs.workDir,
      WORKER_POOL: "nvidia",
      ENROLLMENT_TOKEN: await issueToken(manager, { pool: "nvidia" }),
      FFMPEG_PATH: FAKE_FFMPEG,
      FAKE_FFMPEG_OUTCOME_h264_nvenc: "replay:nvidia-h200/self-test-verbose-h264_nvenc.stderr",
      FAKE_FFMPEG_OUTCOME_hevc_nvenc: "replay:nvidia-h200/self-test-verbose-h264_nvenc.stderr",
    });
    const registered = await agent.waitForMessage("worker registered");
    const worker = await getWorker(manager, registered.workerId as string);
    expect(worker.pool).toBe("nvidia");
    expect(worker.certification).toEqual({
      status: "DEGRADED",
      reasons: [
        "required encoder h264_nvenc failed its self-test: NVIDIA H200 has no NVENC encoder engine (data-centre GPUs such as the A100, H100 and H200 decode on the GPU but cannot encode): enrol this host in the cpu pool, where it can still decode with hwaccel cuda (ffmpeg: OpenEncodeSessionEx failed: unsupported device (2): (no details))",
      ],
    });
    expect(worker.capabilities.filter((name) => name.endsWith("_nvenc"))).toEqual([]);
  });
});
