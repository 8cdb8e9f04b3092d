/**
 * Where to send the browser after sign-in: only a path of this origin. Anything a browser could
 * read as another origin (`//host`, `/\host`, a scheme, control characters) is refused, not
 * rewritten, so an open redirect cannot be smuggled through.
 */
const PROBE_ORIGIN = "https://admin.invalid";

function hasBackslashOrControl(value: string): boolean {
  return [...value].some((char) => char === "\\" || char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f);
}

export function safeReturnTo(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return "/";
  if (!value.startsWith("/") || value.startsWith("//") || hasBackslashOrControl(value)) return undefined;
  const resolved = new URL(value, PROBE_ORIGIN);
  if (resolved.origin !== PROBE_ORIGIN) return undefined;
  return `${resolved.pathname}${resolved.search}${resolved.hash}`;
}
