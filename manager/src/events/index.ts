import type { Logger } from "@tjm/platform";
import type { Standing, StandingQuestion } from "../identity/token-standing.ts";
import { createRouter } from "../platform/http.ts";
import type { EventHub } from "./hub.ts";
import { STANDING_CHECK_MS, StandingWatch } from "./standing-watch.ts";
import { streamEvents, streamEventsRoute } from "./stream.ts";

export interface EventsAppDeps {
  hub: EventHub;
  /** The keep-alive comment's interval; 15 s unless a test shortens it. */
  keepAliveMs?: number | undefined;
  /** SSE_STANDING_CHECK_MS. */
  standingCheckMs?: number | undefined;
  /** TJM's issuer, whose tokens' standing open streams re-check. */
  tjmIssuer: string;
  standings: (questions: readonly StandingQuestion[]) => Promise<Standing[]>;
  logger: Logger;
}

/** The event stream: mounted under /api/v1/operations behind operator auth. */
export function eventsApp(deps: EventsAppDeps) {
  const standing = new StandingWatch({
    tjmIssuer: deps.tjmIssuer,
    intervalMs: deps.standingCheckMs ?? STANDING_CHECK_MS,
    standings: deps.standings,
    logger: deps.logger,
  });
  return createRouter().openapi(streamEventsRoute, streamEvents(deps.hub, standing, deps.keepAliveMs));
}

export { EventHub } from "./hub.ts";
