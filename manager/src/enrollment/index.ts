import { createRouter } from "../platform/http.ts";
import { type EnrollmentDeps, issueEnrollmentToken, issueEnrollmentTokenRoute } from "./issue.ts";

/** Enrollment: mounted under /api/v1/operations behind operator auth. */
export function enrollmentApp(deps: EnrollmentDeps) {
  return createRouter().openapi(issueEnrollmentTokenRoute, issueEnrollmentToken(deps));
}

export type { EnrollmentDeps } from "./issue.ts";
export { consumeEnrollmentToken } from "./store.ts";
export { createTokenHasher } from "./tokens.ts";
