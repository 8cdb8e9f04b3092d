/** Markdown helpers for the scenarios' reports: every number is printed, none is asserted. */

export function table(headers: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(headers), line(headers.map(() => "---")), ...rows.map(line)].join("\n");
}

/** The final section: every scenario's target rows (target, measured, met). */
export function targetsSection(rows: string[][]): string {
  return `## Targets (printed, not asserted)\n\n${table(["target", "measured", "met"], rows)}`;
}

// A value that could not be measured (NaN) prints as n/a.
export const count = (value: number) =>
  Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "n/a";
export const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : "n/a");
export const seconds = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : "n/a");
export const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : "n/a");
/** A ratio close to 1, with three decimals. */
export const fine = (value: number) => (Number.isFinite(value) ? `${value.toFixed(3)}x` : "n/a");
export const fps = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : "n/a");
export const percent = (share: number) => (Number.isFinite(share) ? `${(share * 100).toFixed(1)} %` : "n/a");
export const mib = (bytes: number) =>
  Number.isFinite(bytes) ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : "n/a";
export const kib = (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1024).toFixed(1)} KiB` : "n/a");
/** Whether a target was met; n/a when there is nothing to judge. */
export const met = (ok: boolean | undefined) => (ok === undefined ? "n/a" : ok ? "yes" : "NO");
