import type { z } from "zod";

export type EnvironmentResult<T> = { ok: true; config: T } | { ok: false; problems: string[] };

/**
 * Parses a process's environment with its config schema, once at start. An empty value counts
 * as unset; on failure every missing or invalid variable is listed, each by its name.
 */
export function parseEnvironment<S extends z.ZodType>(
  schema: S,
  source: Record<string, string | undefined>,
): EnvironmentResult<z.infer<S>> {
  const present = Object.fromEntries(
    Object.entries(source).filter(([, value]) => value !== undefined && value !== ""),
  );
  const result = schema.safeParse(present);
  if (result.success) return { ok: true, config: result.data };
  const problems = result.error.issues.map((issue) => {
    const name = String(issue.path[0]);
    if (issue.code === "custom") return `${name}: ${issue.message}`;
    return name in present ? `${name}: ${issue.message}` : `${name}: required but not set`;
  });
  return { ok: false, problems };
}
