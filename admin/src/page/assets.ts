/**
 * The page's static files, served from `/assets/<name>` exactly as they are in this folder.
 * The script is plain modern JavaScript (ES modules the browser loads itself): no build step,
 * no bundler, nothing to keep in sync between source and output. The modules import each other
 * by plain names, so a content hash in each URL would not reach the imports; every file is
 * served `no-cache` with a strong ETag instead, and a revalidation costs a 304.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Hono } from "hono";
import type { AdminEnv } from "../platform/context.ts";

export const ASSETS_PATH = "/assets";

const PAGE_FILES: Record<string, string> = {
  "app.js": "text/javascript; charset=utf-8",
  "element-ids.js": "text/javascript; charset=utf-8",
  "i18n.js": "text/javascript; charset=utf-8",
  "api.js": "text/javascript; charset=utf-8",
  "dom.js": "text/javascript; charset=utf-8",
  "live.js": "text/javascript; charset=utf-8",
  "pager.js": "text/javascript; charset=utf-8",
  "sections.js": "text/javascript; charset=utf-8",
  "jobs.js": "text/javascript; charset=utf-8",
  "job-detail.js": "text/javascript; charset=utf-8",
  "job-detail-parts.js": "text/javascript; charset=utf-8",
  "submit.js": "text/javascript; charset=utf-8",
  "submit-outputs.js": "text/javascript; charset=utf-8",
  "submit-templates.js": "text/javascript; charset=utf-8",
  "workers.js": "text/javascript; charset=utf-8",
  "enrollment.js": "text/javascript; charset=utf-8",
  "account.js": "text/javascript; charset=utf-8",
  "account-profile.js": "text/javascript; charset=utf-8",
  "account-identifiers.js": "text/javascript; charset=utf-8",
  "account-mfa.js": "text/javascript; charset=utf-8",
  "account-sessions.js": "text/javascript; charset=utf-8",
  "account-developer-apps.js": "text/javascript; charset=utf-8",
  "clients.js": "text/javascript; charset=utf-8",
  "client-editor.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

/**
 * Files of packages the page imports, as the package ships them: intl-messageformat's
 * self-contained ES module, the formatter the server's catalogues use.
 */
const PACKAGE_FILES: Record<string, { package: string; file: string; contentType: string }> = {
  "intl-messageformat.js": {
    package: "intl-messageformat",
    file: "intl-messageformat.iife.js",
    contentType: "text/javascript; charset=utf-8",
  },
};

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
  etag: string;
}

/** Reads the page's files once (at app creation: a missing file fails the start, not a request). */
export function loadPageAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const add = (name: string, body: Buffer, contentType: string) => {
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
    assets.set(name, { body: Uint8Array.from(body), contentType, etag });
  };
  for (const [name, contentType] of Object.entries(PAGE_FILES)) {
    add(name, readFileSync(new URL(`./${name}`, import.meta.url)), contentType);
  }
  const require = createRequire(import.meta.url);
  for (const [name, source] of Object.entries(PACKAGE_FILES)) {
    const directory = dirname(require.resolve(source.package));
    add(name, readFileSync(join(directory, source.file)), source.contentType);
  }
  return assets;
}

export function registerAssets(app: Hono<AdminEnv>, assets: Map<string, Asset>) {
  app.get(`${ASSETS_PATH}/:name`, (c) => {
    const asset = assets.get(c.req.param("name"));
    if (asset === undefined) return c.text("not found", 404);
    const headers = { "cache-control": "no-cache", etag: asset.etag, "content-type": asset.contentType };
    if (c.req.header("if-none-match") === asset.etag) return c.body(null, 304, headers);
    return c.body(asset.body, 200, headers);
  });
}
