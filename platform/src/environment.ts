import { z } from "zod";

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

/**
 * What masking a variable needs before the config is logged: a secret is hidden whole; a URL
 * (or a list of them) keeps everything but its password.
 */
type Redaction = { mask: "whole" | "url-password" };

const redactions = z.registry<Redaction>();

/** Marks a variable as a secret: `redactEnvironment` hides its value. */
export function secret<S extends z.ZodType>(schema: S): S {
  redactions.add(schema, { mask: "whole" });
  return schema;
}

/** Marks a URL (or a comma-separated list of them) whose password is a secret. */
export function urlWithSecretPassword<S extends z.ZodType>(schema: S): S {
  redactions.add(schema, { mask: "url-password" });
  return schema;
}

/**
 * The mark on a variable's schema, looked for through the wrappers (optional, default, pipe) that
 * may have been added around the marked schema, so that `secret(x).optional()` stays masked.
 */
function redactionOf(schema: z.ZodType): Redaction | undefined {
  const own = redactions.get(schema);
  if (own) return own;
  const def = schema._zod.def as { innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType };
  for (const inner of [def.innerType, def.in, def.out]) {
    const found = inner && redactionOf(inner);
    if (found) return found;
  }
  return undefined;
}

function maskUrlPassword(value: string): string {
  try {
    const parsed = new URL(value);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "***";
  }
}

/**
 * Config as it may be logged: every variable its schema marks with `secret` or
 * `urlWithSecretPassword` masked, so a new secret is masked by being marked where it is declared.
 */
export function redactEnvironment<S extends z.ZodObject>(
  schema: S,
  config: Record<string, unknown>,
): Record<string, unknown> {
  const shape: Record<string, z.ZodType> = schema.shape;
  return Object.fromEntries(
    Object.entries(config).map(([name, value]) => {
      const field = shape[name];
      const redaction = field && redactionOf(field);
      if (!redaction || value === undefined) return [name, value];
      if (redaction.mask === "whole") return [name, "***"];
      return [name, Array.isArray(value) ? value.map(maskUrlPassword) : maskUrlPassword(String(value))];
    }),
  );
}
