/** The bench's knobs: positive numbers from the environment, with their defaults. */

export function positiveNumbers(env: NodeJS.ProcessEnv, name: string, fallback: string): number[] {
  const raw = env[name] || fallback;
  const values = raw.split(",").map((part) => Number(part.trim()));
  if (values.length === 0 || values.some((value) => !Number.isFinite(value) || value <= 0))
    throw new Error(`${name} must be positive numbers separated by commas, not "${raw}"`);
  return values;
}

export function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const [value, ...rest] = positiveNumbers(env, name, fallback);
  if (value === undefined || rest.length > 0) throw new Error(`${name} must be one positive number`);
  return value;
}

export const positiveInteger = (env: NodeJS.ProcessEnv, name: string, fallback: string) =>
  Math.round(positiveNumber(env, name, fallback));
