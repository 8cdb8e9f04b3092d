import { defineConfig } from "vitest/config";

/**
 * The fault suite (`npm run chaos`, which sets CHAOS_PROFILE and collects the results): each
 * scenario file is independent and they run side by side. In the full profile the scale-out
 * test runs too, with 500 jobs (CLUSTER_JOBS, set by the runner).
 */
const full = (process.env.CHAOS_PROFILE ?? "full") === "full";

export default defineConfig({
  test: {
    include: ["tests/chaos/**/*.chaos.ts", ...(full ? ["tests/cluster/scale-out.test.ts"] : [])],
    globalSetup: ["tests/global-setup.ts"],
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 4,
    testTimeout: 3_600_000,
    hookTimeout: 120_000,
  },
});
