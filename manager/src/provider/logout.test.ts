import { describe, expect, it } from "vitest";
import { endsWithoutConfirmation, type LogoutRequest } from "./logout.ts";

const session = { accountId: "account-1", sid: "sid-1" };
const request: LogoutRequest = { firstParty: true, hint: { sub: "account-1", sid: "sid-1" }, session };

describe("endsWithoutConfirmation", () => {
  it("ends a first-party client's logout whose hint names the session's account and sid", () => {
    expect(endsWithoutConfirmation(request)).toBe(true);
  });

  it.each<[string, Partial<LogoutRequest>]>([
    ["a client that is not first-party", { firstParty: false }],
    ["no hint", { hint: undefined }],
    ["a hint of another account", { hint: { sub: "account-2", sid: "sid-1" } }],
    ["a hint of another session", { hint: { sub: "account-1", sid: "sid-2" } }],
    ["a hint without a sid", { hint: { sub: "account-1" } }],
    ["a hint whose claims are not strings", { hint: { sub: ["account-1"], sid: ["sid-1"] } }],
    ["a session without an account", { session: { accountId: undefined, sid: "sid-1" } }],
    ["a session without a sid for the client", { session: { accountId: "account-1", sid: undefined } }],
    [
      "a hint and a session both without a sid",
      { hint: { sub: "account-1" }, session: { accountId: "account-1", sid: undefined } },
    ],
  ])("asks for %s", (_, change) => {
    expect(endsWithoutConfirmation({ ...request, ...change })).toBe(false);
  });
});
