/**
 * The health check of compose.yaml's TJM services: `node deploy/http-probe.ts URL TIMEOUT_MS`
 * exits 0 when URL answers 2xx within TIMEOUT_MS, 1 otherwise (and says why on stderr). Node runs
 * it directly (type stripping), so the images need no curl. TIMEOUT_MS stays below the check's
 * own timeout, so a slow answer is a failed check that names itself, not a killed probe.
 */
const [url, timeoutText = "4000", ...extra] = process.argv.slice(2);
const timeoutMs = Number(timeoutText);
if (url === undefined || !Number.isInteger(timeoutMs) || timeoutMs <= 0 || extra.length > 0) {
  process.stderr.write("usage: node deploy/http-probe.ts URL TIMEOUT_MS\n");
  process.exit(2);
}
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) process.stderr.write(`${url}: HTTP ${response.status}\n`);
  process.exit(response.ok ? 0 : 1);
} catch (err) {
  process.stderr.write(`${url}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
