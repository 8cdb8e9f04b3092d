import { createRouter } from "../platform/http.ts";
import { live, liveRoute } from "./live.ts";
import { type ReadinessDeps, ready, readyRoute } from "./ready.ts";

/** Mounted at /api/health, public and unversioned. */
export function healthApp(deps: ReadinessDeps) {
  return createRouter().openapi(liveRoute, live).openapi(readyRoute, ready(deps));
}
