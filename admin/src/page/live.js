/**
 * Live updates from `/api/events` (same-origin SSE). When the stream fails, a notice says so
 * and the view is refetched every 10 s, each time also trying the stream again; once it is
 * back, the view is refetched and the notice removed. Every (re)connection refetches, since
 * the stream does not replay what was missed.
 */
import { t } from "./i18n.js";

const POLL_MS = 10_000;
const KINDS = ["job.created", "job.updated", "job.progress", "worker.registered", "worker.updated"];

export function followEvents({ query = "", onEvent, refetch }) {
  const notice = document.getElementById("live-notice");
  let source;
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
          if (source.readyState === EventSource.CLOSED) connect();
        }, POLL_MS);
      }
    });
    for (const kind of KINDS) {
      next.addEventListener(kind, (message) => onEvent(JSON.parse(message.data)));
    }
  };
  connect();
}
