/**
 * What tests/deploy/ needs to know of a Dockerfile without Docker: its stages, what each COPY
 * brings into the image, the RUN commands and the exec-form ENTRYPOINT/CMD, and the problems a
 * build would only show later (a COPY source that is missing or excluded by .dockerignore, an
 * npm script that does not exist, `npm ci` before the manifests it needs). Only the syntax the
 * repository's Dockerfiles use is understood; anything else is reported, never guessed.
 */
import { existsSync } from "node:fs";
import { join, posix } from "node:path";

export interface Copy {
  /** Context-relative, as written (a trailing "/" marks a directory). */
  sources: string[];
  /** Absolute path in the image. */
  destination: string;
  /** Written with a trailing "/" or given several sources: the sources land inside it. */
  intoDirectory: boolean;
  line: number;
}

export interface Stage {
  name: string | undefined;
  /** The image or earlier stage it starts from. */
  from: string;
  workdir: string;
  copies: Copy[];
  runs: { command: string; line: number; copiesBefore: number }[];
  entrypoint: string[] | undefined;
  cmd: string[] | undefined;
  env: Record<string, string>;
}

export interface Dockerfile {
  stages: Stage[];
  /** Problems found while reading it (an instruction form it does not understand). */
  problems: string[];
}

/** Instructions with their line continuations joined, comments and blank lines dropped. */
function instructions(text: string): { keyword: string; rest: string; line: number }[] {
  const result: { keyword: string; rest: string; line: number }[] = [];
  let pending: { text: string; line: number } | undefined;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trimEnd();
    if (pending === undefined && (line.trim() === "" || line.trimStart().startsWith("#"))) return;
    if (pending !== undefined && line.trimStart().startsWith("#")) return;
    const continued = line.endsWith("\\");
    const piece = continued ? line.slice(0, -1) : line;
    pending =
      pending === undefined
        ? { text: piece, line: index + 1 }
        : { ...pending, text: `${pending.text} ${piece.trim()}` };
    if (continued) return;
    const match = /^\s*(\S+)\s*(.*)$/s.exec(pending.text);
    if (match)
      result.push({
        keyword: (match[1] as string).toUpperCase(),
        rest: (match[2] as string).trim(),
        line: pending.line,
      });
    pending = undefined;
  });
  return result;
}

export function parseDockerfile(text: string): Dockerfile {
  const stages: Stage[] = [];
  const problems: string[] = [];
  for (const { keyword, rest, line } of instructions(text)) {
    if (keyword === "FROM") {
      const match = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!match) {
        problems.push(`line ${line}: FROM ${rest} not understood`);
        continue;
      }
      const from = match[1] as string;
      const parent = stages.find((stage) => stage.name === from);
      stages.push({
        name: match[2],
        from,
        workdir: parent?.workdir ?? "/",
        copies: parent ? [...parent.copies] : [],
        runs: [],
        entrypoint: parent?.entrypoint,
        cmd: parent?.cmd,
        env: { ...parent?.env },
      });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) {
      problems.push(`line ${line}: ${keyword} before FROM`);
      continue;
    }
    if (keyword === "WORKDIR") stage.workdir = posix.resolve(stage.workdir, rest);
    else if (keyword === "COPY" || keyword === "ADD") {
      const words = rest.split(/\s+/);
      const flags = words.filter((word) => word.startsWith("--"));
      const paths = words.filter((word) => !word.startsWith("--"));
      // Copies from another stage or image bring nothing of the build context.
      if (flags.some((flag) => flag.startsWith("--from="))) continue;
      if (rest.startsWith("[") || paths.length < 2) {
        problems.push(`line ${line}: ${keyword} ${rest} not understood`);
        continue;
      }
      const destination = paths.at(-1) as string;
      stage.copies.push({
        sources: paths.slice(0, -1),
        destination: posix.resolve(stage.workdir, destination),
        intoDirectory: destination.endsWith("/") || destination === "." || paths.length > 2,
        line,
      });
    } else if (keyword === "RUN") stage.runs.push({ command: rest, line, copiesBefore: stage.copies.length });
    else if (keyword === "ENTRYPOINT" || keyword === "CMD") {
      let form: unknown;
      try {
        form = JSON.parse(rest);
      } catch {
        form = undefined;
      }
      if (!Array.isArray(form) || !form.every((item) => typeof item === "string")) {
        // Shell form would put /bin/sh -c in front and keep signals from the process.
        problems.push(`line ${line}: ${keyword} must use the exec form (a JSON array)`);
        continue;
      }
      if (keyword === "ENTRYPOINT") stage.entrypoint = form;
      else stage.cmd = form;
    } else if (keyword === "ENV") {
      for (const match of rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g))
        stage.env[match[1] as string] = (match[2] as string).replace(/^"|"$/g, "");
    }
  }
  return { stages, problems };
}

/** The stage a build of `target` (the last stage without one) produces. */
export function stageOf(dockerfile: Dockerfile, target: string | undefined): Stage | undefined {
  return target === undefined
    ? dockerfile.stages.at(-1)
    : dockerfile.stages.find((stage) => stage.name === target);
}

/** `.dockerignore` patterns as one matcher of context-relative paths (the forms used here: `**`, `*`, plain paths). */
export function dockerignore(text: string): (path: string) => boolean {
  const patterns = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((pattern) => {
      const body = pattern
        .replace(/\/+$/, "")
        .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
        .replaceAll("**/", "\u0000")
        .replaceAll("*", "[^/]*")
        .replaceAll("\u0000", "(?:.*/)?");
      // A pattern matches the path itself and everything under it.
      return new RegExp(`^${body}(?:/.*)?$`);
    });
  return (path) => patterns.some((pattern) => pattern.test(path.replace(/\/+$/, "")));
}

/** Whether the image has `path` (absolute) through one of the stage's copies. */
export function copiedInto(stage: Stage, path: string): boolean {
  return stage.copies.some((copy) =>
    copy.sources.some((source) => {
      // A directory source copies its contents into the destination.
      if (source.endsWith("/")) return path.startsWith(`${copy.destination.replace(/\/+$/, "")}/`);
      const target = copy.intoDirectory
        ? posix.join(copy.destination, posix.basename(source))
        : copy.destination;
      return path === target;
    }),
  );
}

/** The npm scripts a RUN command names (`npm run X`, `npm run-script X`, with or without flags). */
export function npmScriptsRun(command: string): string[] {
  return [...command.matchAll(/\bnpm\s+(?:run|run-script)\s+(?:--?\S+\s+)*([\w:.-]+)/g)].map(
    (match) => match[1] as string,
  );
}

export interface LintContext {
  /** Repository root; build contexts are relative to it. */
  root: string;
  context: string;
  ignored: (path: string) => boolean;
  scripts: Record<string, string>;
  /** Folders of the npm workspaces (their package.json must be in the image before `npm ci`). */
  workspaces: string[];
  /** Files the root postinstall needs before `npm ci` (e.g. patch-package's patches/). */
  postinstallInputs: string[];
}

/** Every problem a build of this Dockerfile would meet with this context. */
export function lintDockerfile(dockerfile: Dockerfile, lint: LintContext): string[] {
  const problems = [...dockerfile.problems];
  const seen = new Set<Copy>();
  for (const stage of dockerfile.stages) {
    for (const copy of stage.copies) {
      if (seen.has(copy)) continue;
      seen.add(copy);
      for (const source of copy.sources) {
        const path = posix.normalize(posix.join(lint.context, source)).replace(/\/+$/, "");
        if (!existsSync(join(lint.root, path)))
          problems.push(`line ${copy.line}: COPY source ${source} does not exist`);
        else if (lint.ignored(posix.relative(lint.context, path)))
          problems.push(`line ${copy.line}: COPY source ${source} is excluded by .dockerignore`);
      }
    }
    for (const run of stage.runs) {
      for (const script of npmScriptsRun(run.command)) {
        if (!Object.hasOwn(lint.scripts, script))
          problems.push(
            `line ${run.line}: RUN names npm script "${script}", which package.json does not define`,
          );
      }
      if (/\bnpm\s+(ci|install)\b/.test(run.command)) {
        const before = { ...stage, copies: stage.copies.slice(0, run.copiesBefore) };
        const needed = [
          "package.json",
          "package-lock.json",
          ...lint.workspaces.map((workspace) => `${workspace}/package.json`),
          ...lint.postinstallInputs,
        ];
        for (const file of needed) {
          if (!copiedInto(before, posix.resolve(stage.workdir, file)))
            problems.push(`line ${run.line}: npm ci runs before ${file} is in the image`);
        }
      }
    }
  }
  return problems;
}
