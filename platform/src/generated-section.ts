/**
 * A page with a generated section between two markers (docs/lifecycle.md holds the Manager's
 * lifecycle and the Worker's phases): the section is replaced, markers included, and the rest of
 * the page is left as it is. No I/O.
 */
export function withGeneratedSection(
  page: string,
  markers: { start: string; end: string },
  section: string,
  pageName: string,
): string {
  const start = page.indexOf(markers.start);
  const end = page.indexOf(markers.end);
  if (start < 0 || end < start) throw new Error(`${pageName} needs ${markers.start} … ${markers.end}`);
  return page.slice(0, start) + section + page.slice(end + markers.end.length);
}
