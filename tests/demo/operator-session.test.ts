/**
 * The demo's operator token file: written at sign-in, rewritten at every refresh (0600, in one
 * rename) so the printed `export TOKEN=$(cat FILE)` hint always holds a token the Manager takes,
 * and removed when the demo ends. Tokens live 30 s here (the shortest the provider allows), so
 * the refresh falls due after 15 s instead of 9 minutes.
 */
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createClient } from "../../manager/src/identity/clients/index.ts";
import { OPERATIONS_REDIRECT_URI, OPERATOR_EMAIL, OperatorSession } from "../../scripts/demo-identity.ts";
import { createTestAccount, TEST_PASSWORD } from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

let manager: TestManager;
let directory: string;
let clientId: string;

beforeAll(async () => {
  manager = await TestManager.start({ env: { PROVIDER_ACCESS_TOKEN_TTL_SECONDS: "30" } });
  directory = await mkdtemp(join(tmpdir(), "tjm-demo-token-"));
  await createTestAccount(manager.sql, { email: OPERATOR_EMAIL, roles: ["operator"] });
  clientId = crypto.randomUUID();
  await createClient(manager.sql, {
    clientId,
    name: "TJM demo operations",
    clientSecretHmac: null,
    tokenEndpointAuthMethod: "none",
    redirectUris: [OPERATIONS_REDIRECT_URI],
    grantTypes: ["authorization_code", "refresh_token"],
    responseTypes: ["code"],
    firstParty: true,
    resources: [OPERATIONS_AUDIENCE],
    projectIds: [],
  });
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
  await manager?.close();
});

async function managerAnswer(token: string): Promise<number> {
  const response = await manager.request("/api/v1/operations/jobs?limit=1", {
    headers: { authorization: `Bearer ${token}` },
  });
  await response.body?.cancel();
  return response.status;
}

describe("the demo's operator token file", () => {
  it("is rewritten with a fresh token at each refresh, readable by its owner only, and removed at the end", async () => {
    const tokenFile = join(directory, "demo.token");
    const session = await OperatorSession.signIn(manager.issuerUrl, clientId, TEST_PASSWORD, tokenFile);
    const first = (await readFile(tokenFile, "utf8")).trim();
    expect(first).toBe(await session.accessToken());
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    expect(await managerAnswer(first)).toBe(200);

    const errors: Error[] = [];
    session.keepRenewing(250, (error) => errors.push(error));
    await vi.waitFor(async () => expect((await readFile(tokenFile, "utf8")).trim()).not.toBe(first), {
      timeout: 25_000,
      interval: 250,
    });
    const second = (await readFile(tokenFile, "utf8")).trim();
    expect(errors).toEqual([]);
    expect(second).toBe(await session.accessToken());
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    expect(await managerAnswer(second)).toBe(200);

    await session.end();
    await expect(stat(tokenFile)).rejects.toMatchObject({ code: "ENOENT" });
  }, 45_000);
});
