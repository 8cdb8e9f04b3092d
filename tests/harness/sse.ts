import { waitFor } from "@tjm/devstack/services";
import type { TestManager } from "./manager.ts";

export interface ServerSentEvent {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** A minimal SSE reader over fetch: collects events until closed. */
export async function subscribeEvents(manager: TestManager, query = "") {
  const controller = new AbortController();
  const response = await fetch(`${manager.baseUrl}/api/v1/operations/events${query}`, {
    headers: { authorization: `Bearer ${await manager.issuer.token()}` },
    signal: controller.signal,
  });
  const received: ServerSentEvent[] = [];
  const reading = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      const reader = response.body.getReader();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        buffer += decoder.decode(chunk.value, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: ServerSentEvent = {};
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) event.comment = line.slice(1).trim();
            else {
              const [field, ...rest] = line.split(":");
              const value = rest.join(":").replace(/^ /, "");
              if (field === "id" || field === "event" || field === "data") event[field] = value;
            }
          }
          received.push(event);
          end = buffer.indexOf("\n\n");
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  await waitFor("the stream to open", async () => received.some((event) => event.comment === "connected"));
  return {
    response,
    events: () => received.filter((event) => event.event !== undefined),
    comments: () => received.flatMap((event) => (event.comment === undefined ? [] : [event.comment])),
    async close() {
      controller.abort();
      await reading;
    },
  };
}
