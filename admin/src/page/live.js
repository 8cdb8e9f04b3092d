/**
 * Live updates from `/api/events` (same-origin SSE). When the stream fails, a notice says so
 * and the view is refetched every 10 s, each time also trying the stream again; once it is
 * back, the view is refetched and the notice removed. Every (re)connection refetches, since
 * the stream does not replay what was missed.
 */
import { byId } from "./dom.js";
import { ids } from "./element-ids.js";
import { t } from "./i18n.js";

/** @typedef {import("@tjm/sdk").components["schemas"]["EventEnvelope"]} EventEnvelope */

/**
 * A job.progress event's data (the API document leaves each kind's data open).
 * @typedef {object} JobProgress
 * @property {string} jobId
 * @property {string} attemptId
 * @property {number | null} percent
 * @property {number | null} fps
 * @property {number | null} speed
 * @property {number | null} etaSeconds
 */

const POLL_MS = 10_000;
/** @type {EventEnvelope["kind"][]} */
const KINDS = ["job.created", "job.updated", "job.progress", "worker.registered", "worker.updated"];

/**
 * @param {{ query?: string, onEvent: (event: EventEnvelope) => void, refetch: () => void }} handlers
 */
export function followEvents({ query = "", onEvent, refetch }) {
  const notice = byId(ids.liveNotice, HTMLElement);
  /** @type {EventSource | undefined} */
  let source;
  /** @type {number | undefined} */
  let poller;
  const connect = () => {
    const next = new EventSource(`/api/events${query}`);
    source = next;
    next.addEventListener("open", () => {
      if (poller !== undefined) {
        clearInterval(poller);
        poller = undefined;
        notice.textContent = "";
      }
      refetch();
    });
    next.addEventListener("error", () => {
      // The browser would retry on its own only after some failures; one schedule for all.
      next.close();
      if (poller === undefined) {
        notice.textContent = t("common.liveLost");
        poller = setInterval(() => {
          refetch();
          if (source?.readyState === EventSource.CLOSED) connect();
        }, POLL_MS);
      }
    });
    for (const kind of KINDS) {
      next.addEventListener(kind, (message) => onEvent(JSON.parse(message.data)));
    }
  };
  connect();
}

/**
 * The progress `event` reports, if it is a job.progress.
 * @param {EventEnvelope} event
 * @returns {JobProgress | undefined}
 */
export function reportedProgress(event) {
  return event.kind === "job.progress" ? /** @type {JobProgress} */ (event.data) : undefined;
}
