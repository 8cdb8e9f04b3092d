/**
 * Every relative link in the repository's Markdown resolves inside the repository: a clone has
 * nothing above its root, so a link there (or to a file that moved) is broken for every reader.
 * Anchors into Markdown files are checked against the target's headings as GitHub names them.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { REPOSITORY_ROOT } from "@tjm/devstack/manager-process";
import { describe, expect, it } from "vitest";

/** Inline links and images `[text](target)`, and reference definitions `[name]: target`. */
const INLINE_LINK = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const REFERENCE_DEFINITION = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm;
const HTML_LINK = /<(?:a|img)\s[^>]*?(?:href|src)="([^"]+)"/g;

function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** Markdown without fenced code blocks and inline code, where brackets are not links. */
function prose(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, "");
}

export function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  return [
    ...text.matchAll(INLINE_LINK),
    ...text.matchAll(REFERENCE_DEFINITION),
    ...text.matchAll(HTML_LINK),
  ].map((match) => match[1] as string);
}

/** GitHub's heading anchors: lowercase, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = (match[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1] as string);
  return anchors;
}

/** Why `target`, linked from `file` (a path from `root`), is broken; undefined when it resolves. */
export function brokenLink(root: string, file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: … leave the repository on purpose
  const [pathPart = "", anchor] = target.split("#", 2);
  const path = decodeURI(pathPart);
  if (isAbsolute(path)) return "an absolute path: a clone lives elsewhere";
  const resolved = path === "" ? join(root, file) : resolve(root, dirname(file), path);
  const inside = relative(root, resolved);
  if (inside.startsWith("..") || isAbsolute(inside)) return "points outside the repository";
  if (!existsSync(resolved)) return "no such file in the repository";
  if (anchor && resolved.endsWith(".md") && statSync(resolved).isFile()) {
    if (!headingAnchors(readFileSync(resolved, "utf8")).has(anchor)) return `no heading #${anchor} there`;
  }
  return undefined;
}

function trackedMarkdown(): string[] {
  const listed = execFileSync("git", ["ls-files", "-z", "--", "*.md"], {
    cwd: REPOSITORY_ROOT,
    encoding: "utf8",
  });
  return listed.split("\0").filter((file) => file !== "" && existsSync(join(REPOSITORY_ROOT, file)));
}

describe("links in the repository's Markdown", () => {
  it("each relative link resolves to a file (and heading) inside the repository", () => {
    const files = trackedMarkdown();
    expect(files).toContain("README.md");
    const broken: string[] = [];
    for (const file of files) {
      for (const target of linkTargets(readFileSync(join(REPOSITORY_ROOT, file), "utf8"))) {
        const reason = brokenLink(REPOSITORY_ROOT, file, target);
        if (reason) broken.push(`${file}: ${target} (${reason})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("refuses a link above the root even where the machine has that file", () => {
    const parent = relative(REPOSITORY_ROOT, dirname(REPOSITORY_ROOT));
    expect(brokenLink(REPOSITORY_ROOT, "README.md", `${parent}/`)).toBe("points outside the repository");
    expect(brokenLink(REPOSITORY_ROOT, "docs/api.md", "../../elsewhere/SPEC.md")).toBe(
      "points outside the repository",
    );
  });

  it("refuses a missing file and a missing heading, and accepts existing ones", () => {
    expect(brokenLink(REPOSITORY_ROOT, "README.md", "docs/no-such-page.md")).toBe(
      "no such file in the repository",
    );
    expect(brokenLink(REPOSITORY_ROOT, "README.md", "docs/api.md#no-such-heading")).toBe(
      "no heading #no-such-heading there",
    );
    expect(brokenLink(REPOSITORY_ROOT, "docs/api.md", "../README.md")).toBeUndefined();
    expect(brokenLink(REPOSITORY_ROOT, "README.md", "https://example.com/x")).toBeUndefined();
  });

  it("finds links in prose, not in code", () => {
    const markdown = '[a](a.md) ![b](img/b.png "t")\n`[c](c.md)`\n```\n[d](d.md)\n```\n[e]: e.md\n';
    expect(linkTargets(markdown).sort()).toEqual(["a.md", "e.md", "img/b.png"]);
  });

  it("names headings as GitHub does", () => {
    const anchors = headingAnchors(
      "# Sign-in and tokens\n## `npm run demo`: what it shows\n## Notes\n## Notes\n",
    );
    expect([...anchors]).toEqual(["sign-in-and-tokens", "npm-run-demo-what-it-shows", "notes", "notes-1"]);
  });
});
