import { createRouter } from "../platform/http.ts";
import type { EventHub } from "./hub.ts";
import { streamEvents, streamEventsRoute } from "./stream.ts";

/** The event stream: mounted under /api/v1/operations behind operator auth. */
export function eventsApp(hub: EventHub, keepAliveMs?: number) {
  return createRouter().openapi(streamEventsRoute, streamEvents(hub, keepAliveMs));
}

export { EventHub } from "./hub.ts";
