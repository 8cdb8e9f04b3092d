/**
 * JSON bodies read strictly, by the Manager and the Admin console alike: text that is not text
 * is refused at its place instead of being stored as U+FFFD. A body must be UTF-8 (RFC 8259
 * §8.1); a lenient decoder puts U+FFFD where it is not, and JSON's `\uD800` escape names a lone
 * surrogate, which is no character: PostgreSQL and every UTF-8 encoder store it as U+FFFD.
 */
import type { ErrorDetail } from "./error-codes.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The body's text, or undefined when its bytes are not UTF-8 (a leading BOM is dropped). */
export function decodeUtf8(bytes: ArrayBuffer | Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

export const NOT_UTF8_DETAIL: ErrorDetail = {
  path: "body",
  message: "is not UTF-8: JSON bodies are UTF-8 text (RFC 8259)",
  code: "validation.invalid_encoding",
};

/** Details past these become one "and more": a body of a million lone surrogates answers briefly. */
export const MAX_SURROGATE_DETAILS = 20;

// Strictly decoded UTF-8 holds no surrogate, so only an escape can put one in a string.
const SURROGATE_ESCAPE = /\\u[dD][89abcdefABCDEF]/;
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The string without lone surrogates (each becomes U+FFFD): how a key holding one is named in a path. */
function shown(text: string): string {
  return text.replace(new RegExp(LONE_SURROGATE.source, "g"), "\uFFFD");
}

/** A path as a chain to its parent: a deeply nested body costs no copy of its path per level. */
interface PathLink {
  parent: PathLink | undefined;
  key: string;
}

function dotPath(link: PathLink | undefined): string {
  const keys: string[] = [];
  for (let at = link; at !== undefined; at = at.parent) keys.push(at.key);
  return keys.length === 0 ? "body" : keys.reverse().join(".");
}

/**
 * A detail for every string of the JSON text, key or value, that holds a lone surrogate, at its
 * dot path ("body" for the whole body), in document order; past MAX_SURROGATE_DETAILS, one more
 * says there are more. Text that does not parse has none: the body's parser reports it. The walk
 * is a loop, not a recursion: a body nested 10,000 deep must not overflow the stack.
 */
export function loneSurrogateDetails(text: string): ErrorDetail[] {
  if (!SURROGATE_ESCAPE.test(text)) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  const details: ErrorDetail[] = [];
  // Each entry: a value, its path, and whether its key holds a lone surrogate.
  const pending: [unknown, PathLink | undefined, boolean][] = [[value, undefined, false]];
  while (pending.length > 0) {
    const [node, path, loneInKey] = pending.pop() as [unknown, PathLink | undefined, boolean];
    if (loneInKey) details.push(surrogateDetail(dotPath(path), "its name holds"));
    if (typeof node === "string") {
      if (LONE_SURROGATE.test(node)) details.push(surrogateDetail(dotPath(path), "holds"));
    } else if (typeof node === "object" && node !== null) {
      const children = Object.entries(node);
      // Last first, so the first is taken next: details come in the body's order.
      for (let index = children.length - 1; index >= 0; index--) {
        const [key, child] = children[index] as [string, unknown];
        pending.push([child, { parent: path, key: shown(key) }, LONE_SURROGATE.test(key)]);
      }
    }
    if (details.length > MAX_SURROGATE_DETAILS) {
      return [
        ...details.slice(0, MAX_SURROGATE_DETAILS),
        { path: "body", message: "holds more lone surrogates", code: "validation.lone_surrogate" },
      ];
    }
  }
  return details;
}

function surrogateDetail(path: string, holds: "holds" | "its name holds"): ErrorDetail {
  return {
    path,
    message: `${holds} a lone surrogate (a \\uD800–\\uDFFF escape without its pair), which is no character`,
    code: "validation.lone_surrogate",
  };
}
