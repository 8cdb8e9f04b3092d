/** The Manager routes several scenarios call, over the load generator's client. */
import type { HttpClient } from "./load.ts";

export const JOBS_PATH = "/api/v1/operations/jobs";
const ENROLLMENT_TOKENS_PATH = "/api/v1/operations/enrollment-tokens";
const EMPTY_BODY = Buffer.from("{}");

/** A one-time enrollment token for one Worker, from the real route. */
export async function issueEnrollmentToken(client: HttpClient): Promise<string> {
  const issued = await client.expect(201, "POST", ENROLLMENT_TOKENS_PATH, EMPTY_BODY);
  return (JSON.parse(issued.body) as { token: string }).token;
}
