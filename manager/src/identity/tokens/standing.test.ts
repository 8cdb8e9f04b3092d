import { describe, expect, it } from "vitest";
import {
  AUTHORIZATION_VERSION_CLAIM,
  GRANT_CLAIM,
  judgeStanding,
  type TokenStandingRow,
} from "./standing.ts";

const ACCOUNT = "6f1c7a52-4f3e-4b8e-9d1a-2c3b4d5e6f70";
const STANDING_ROW: TokenStandingRow = {
  clientActive: true,
  authorizationVersion: "1",
  accountExists: true,
  accountDisabled: false,
  tokensValidAfter: null,
  operator: true,
  clientAdmin: true,
  sessionLive: true,
  grantLive: true,
};
const ACCOUNT_CLAIMS = {
  sub: ACCOUNT,
  client_id: "console",
  iat: 1_700_000_000,
  sid: "session-id",
  [GRANT_CLAIM]: "grant-id",
  [AUTHORIZATION_VERSION_CLAIM]: 1,
};

describe("judgeStanding", () => {
  it("lets an account's token with a live session and grant through", () => {
    expect(judgeStanding(ACCOUNT_CLAIMS, STANDING_ROW, "operations")).toEqual({ ok: true });
  });

  it.each([
    ["names no sign-in session", { sid: undefined }, "names no sign-in session"],
    ["names no grant", { [GRANT_CLAIM]: undefined }, "names no grant"],
  ])("refuses an account's token that %s, whatever its rows say", (_, change, reason) => {
    expect(judgeStanding({ ...ACCOUNT_CLAIMS, ...change }, STANDING_ROW, "operations")).toEqual({
      ok: false,
      status: 401,
      reason: expect.stringContaining(reason),
    });
  });

  it("refuses an account's token whose grant was revoked", () => {
    expect(judgeStanding(ACCOUNT_CLAIMS, { ...STANDING_ROW, grantLive: false }, "operations")).toEqual({
      ok: false,
      status: 401,
      reason: expect.stringContaining("grant was revoked"),
    });
  });

  it("needs neither session nor grant for a client's own token (client credentials)", () => {
    const claims = { sub: "tenant-client", client_id: "tenant-client", [AUTHORIZATION_VERSION_CLAIM]: 1 };
    expect(
      judgeStanding(claims, { ...STANDING_ROW, sessionLive: false, grantLive: false }, "tenant"),
    ).toEqual({
      ok: true,
    });
  });
});
