import type { Logger } from "@tjm/platform";
import type { Standing, StandingQuestion } from "../identity/tokens/standing.ts";
import { createRouter } from "../platform/http.ts";
import type { EventHub } from "./hub.ts";
import { STANDING_CHECK_MS, StandingWatch } from "./standing-watch.ts";
import { streamEvents, streamEventsRoute } from "./stream.ts";
import { type TokenStandingsDeps, tokenStandings, tokenStandingsRoute } from "./token-standings.ts";

export interface EventsAppDeps {
  hub: EventHub;
  /** SSE_STANDING_CHECK_MS. */
  standingCheckMs?: number | undefined;
  /** TJM's issuer, whose tokens' standing open streams re-check. */
  tjmIssuer: string;
  standings: (questions: readonly StandingQuestion[]) => Promise<Standing[]>;
  /** An operations token's signature, issuer and audience, for relays asking after their users' tokens. */
  verifyOperationsToken: TokenStandingsDeps["verify"];
  logger: Logger;
}

/** The event stream and the standings relays of it ask: mounted under /api/v1/operations behind operator auth. */
export function eventsApp(deps: EventsAppDeps) {
  const standing = new StandingWatch({
    tjmIssuer: deps.tjmIssuer,
    intervalMs: deps.standingCheckMs ?? STANDING_CHECK_MS,
    standings: deps.standings,
    logger: deps.logger,
  });
  return createRouter()
    .openapi(streamEventsRoute, streamEvents(deps.hub, standing))
    .openapi(
      tokenStandingsRoute,
      tokenStandings({ verify: deps.verifyOperationsToken, standings: deps.standings }),
    );
}

export { EventHub } from "./hub.ts";
