import { describe, expect, it } from "vitest";
import { ApiError } from "../../platform/errors.ts";
import { requireRecentAuthentication } from "./recent-authentication.ts";

const now = Date.UTC(2026, 10, 27, 12, 0, 0);
const seconds = now / 1000;

function refusal(authenticatedAt: number | undefined): ApiError | undefined {
  try {
    requireRecentAuthentication({ authenticatedAt }, 300, now);
    return undefined;
  } catch (error) {
    return error as ApiError;
  }
}

describe("requireRecentAuthentication", () => {
  it("accepts a sign-in within the window, its last second included", () => {
    expect(refusal(seconds)).toBeUndefined();
    expect(refusal(seconds - 300)).toBeUndefined();
  });

  it.each([
    ["one second past the window", seconds - 301],
    ["a day old", seconds - 86_400],
    ["without auth_time", undefined],
  ])("refuses a sign-in %s with 403 and the max_age to send", (_name, authenticatedAt) => {
    const error = refusal(authenticatedAt);
    expect(error).toBeInstanceOf(ApiError);
    expect(error?.status).toBe(403);
    expect(error?.body("request-1")).toMatchObject({
      code: "auth.reauthentication_required",
      maxAge: 300,
      statusCode: 403,
    });
  });
});
