/**
 * Text for ffmpeg's -filter_complex. Arguments go to ffmpeg as an array, so no shell quoting
 * is involved, but a filtergraph is itself a small language parsed twice: the graph parser
 * splits on `[ ] , ;` and then each filter splits its arguments on `:` and `=`; both levels
 * honour backslash escapes and single quotes (ffmpeg-filters(1), "Notes on filtergraph
 * escaping"). A path reaches the filter intact only when escaped for the filter first and
 * then for the graph.
 */

/**
 * Backslash before every ASCII character other than letters, digits and `/ . _ -`. Over-escaping
 * is harmless (a backslash makes any character literal) and also keeps leading or trailing
 * blanks and newlines, which both levels would otherwise trim. Non-ASCII is never special.
 */
function escapeLevel(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are escaped too
  return text.replace(/[\x01-\x7f]/g, (char) => (/[A-Za-z0-9/._-]/.test(char) ? char : `\\${char}`));
}

/** A value for one filter option inside -filter_complex, e.g. the file of `subtitles=filename=`. */
export function filterArgument(value: string): string {
  return escapeLevel(escapeLevel(value));
}

/** Seconds for trim/setpts from milliseconds, in plain decimal: 1500 -> "1.5", 33 -> "0.033". */
export function seconds(ms: number): string {
  return String(ms / 1000);
}

/** A stream the graph or a -map can read: an input stream ("0:a:1") or a graph pad ("a0kept"). */
export type StreamRef = { kind: "input"; spec: string } | { kind: "pad"; label: string };

export const inputStream = (spec: string): StreamRef => ({ kind: "input", spec });
export const pad = (label: string): StreamRef => ({ kind: "pad", label });

/** As a filter's input or output: "[0:a:1]", "[a0kept]". */
export function link(ref: StreamRef): string {
  return `[${ref.kind === "input" ? ref.spec : ref.label}]`;
}

/** As the value of -map: "0:a:1", "[a0kept]". */
export function mapTarget(ref: StreamRef): string {
  return ref.kind === "input" ? ref.spec : `[${ref.label}]`;
}

/**
 * Sends one stream to `count` consumers: itself when there is one, otherwise a split/asplit
 * whose outputs are named `${prefix}0..`.
 */
export function fanOut(
  graph: string[],
  source: StreamRef,
  count: number,
  filter: "split" | "asplit",
  prefix: string,
): StreamRef[] {
  if (count <= 1) return count === 1 ? [source] : [];
  const outputs = Array.from({ length: count }, (_, index) => pad(`${prefix}${index}`));
  graph.push(`${link(source)}${filter}=${count}${outputs.map(link).join("")}`);
  return outputs;
}
