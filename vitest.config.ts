import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "admin/src/**/*.test.ts",
      "manager/src/**/*.test.ts",
      "platform/src/**/*.test.ts",
      "protocol/src/**/*.test.ts",
      "storage/src/**/*.test.ts",
      "worker-agent/**/*.test.ts",
      "tests/**/*.test.ts",
    ],
    globalSetup: ["tests/global-setup.ts"],
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 4,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
