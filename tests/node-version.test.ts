import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";

/** 22: the oldest Node with upstream support (20 ended in April 2026); oidc-provider 9 and the AWS SDK need it. */
const OLDEST_SUPPORTED_MAJOR = 22;

describe("the Node the suite runs on", () => {
  it(`is ${OLDEST_SUPPORTED_MAJOR} or newer`, () => {
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(OLDEST_SUPPORTED_MAJOR);
  });

  it("is the one pinned in devDependencies, which npm scripts find first on PATH", async () => {
    const manifest = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
    expect(manifest.engines.node).toBe(`>=${OLDEST_SUPPORTED_MAJOR}`);
    expect(process.version).toBe(`v${manifest.devDependencies.node}`);
  });
});
