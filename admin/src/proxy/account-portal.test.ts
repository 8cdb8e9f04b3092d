import { describe, expect, it } from "vitest";
import { consoleAvatarUrl, managerPathFor } from "./account-portal.ts";

describe("managerPathFor", () => {
  it.each([
    ["/api/me", "/api/v1/me"],
    ["/api/me/profile", "/api/v1/me/profile"],
    ["/api/me/sessions/abc-123", "/api/v1/me/sessions/abc-123"],
  ])("forwards %s to %s", (path, expected) => {
    expect(managerPathFor(path)).toBe(expected);
  });

  it.each(["/api/meow", "/api/me/%2e%2e/operations/jobs", "/api/me/a%2Fb", "/api/me/..", "/api/me/%zz"])(
    "keeps %s out of the Manager's other routes",
    (path) => {
      expect(managerPathFor(path)).toBeUndefined();
    },
  );
});

describe("consoleAvatarUrl", () => {
  it("renames the snapshot's and each remembered account's avatarUrl, and nothing else", () => {
    expect(
      consoleAvatarUrl({
        avatarUrl: "/api/v1/me/profile/avatar?v=1",
        accounts: [
          { id: "a", avatarUrl: "/api/v1/me/accounts/a/avatar?v=2", name: "/api/v1/me/x" },
          { id: "b", avatarUrl: null },
          { id: "c", avatarUrl: "https://elsewhere.example/api/v1/me/x" },
        ],
      }),
    ).toEqual({
      avatarUrl: "/api/me/profile/avatar?v=1",
      accounts: [
        { id: "a", avatarUrl: "/api/me/accounts/a/avatar?v=2", name: "/api/v1/me/x" },
        { id: "b", avatarUrl: null },
        { id: "c", avatarUrl: "https://elsewhere.example/api/v1/me/x" },
      ],
    });
  });
});
