/**
 * Request bodies bounded while they stream, on any runtime's web Request: what the Manager and
 * the Admin console put in front of every route, so no handler can buffer more than its limit.
 */

/** What a limit makes of a request: refused on its header alone, or handed on with a counted body. */
export type BoundedBody =
  | { declaredTooLarge: true }
  | {
      declaredTooLarge: false;
      /** The request to hand on: the same one, or one whose body errors past the limit. */
      request: Request;
      /** Whether a reader went past the limit (and got `overLimit()` instead of the bytes). */
      exceeded(): boolean;
    };

/**
 * A declared Content-Length is judged from the header alone: the HTTP framing never hands a
 * reader more than it declares, and the adapter's fast body path stays. A chunked body is
 * counted as the handler reads it, one chunk at a time, and errors with `overLimit()` on the
 * chunk that passes `maxBytes`; nothing is read before the handler asks, so a handler that
 * refuses before reading reads nothing. The source is left alone past the limit, not
 * cancelled: on Node cancelling it destroys the socket before the 413 can be written.
 */
export function boundBody(request: Request, maxBytes: number, overLimit: () => unknown): BoundedBody {
  if (!request.headers.has("transfer-encoding")) {
    const declared = Number(request.headers.get("content-length") ?? 0);
    if (declared > maxBytes) return { declaredTooLarge: true };
    return { declaredTooLarge: false, request, exceeded: () => false };
  }
  const source = request.body;
  if (source === null) return { declaredTooLarge: false, request, exceeded: () => false };
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let received = 0;
  let over = false;
  const counted = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        reader ??= source.getReader();
        const { done, value } = await reader.read();
        if (done) return controller.close();
        received += value.byteLength;
        if (received > maxBytes) {
          over = true;
          return controller.error(overLimit());
        }
        controller.enqueue(value);
      },
      cancel(reason) {
        return reader === undefined ? source.cancel(reason) : reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return {
    declaredTooLarge: false,
    request: new Request(request, { body: counted, duplex: "half" } as RequestInit),
    exceeded: () => over,
  };
}
