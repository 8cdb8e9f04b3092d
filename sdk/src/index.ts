/**
 * TypeScript SDK for the TJM API. `schema.ts` is generated from openapi/openapi.json by
 * `npm run gen`; this file only wires openapi-fetch to it.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.ts";

export type { components, paths } from "./schema.ts";
export type Job = components["schemas"]["Job"];
export type JobDetail = components["schemas"]["JobDetail"];
export type JobList = components["schemas"]["JobList"];
export type SubmitJob = components["schemas"]["SubmitJob"];
export type ExecutionPlanTemplate = components["schemas"]["ExecutionPlanTemplate"];
export type ApiError = components["schemas"]["Error"];
export type ValidationError = components["schemas"]["ValidationError"];

export interface TjmClientOptions {
  /** Origin of the Manager, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  /** Bearer token for operator routes, or a function returning a fresh one per request. */
  token?: string | (() => string | Promise<string>);
  fetch?: typeof fetch;
}

export type TjmClient = Client<paths>;

export function createTjmClient(options: TjmClientOptions): TjmClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const { token } = options;
  if (token !== undefined) {
    client.use({
      async onRequest({ request }) {
        const value = typeof token === "function" ? await token() : token;
        request.headers.set("authorization", `Bearer ${value}`);
        return request;
      },
    });
  }
  return client;
}
