/**
 * Structured logs: one JSON object per line (time, level, msg, the logger's base fields, then
 * the call's fields), the same shape from the Manager and the Worker agent, so one log pipeline
 * reads both. Errors keep their name, message, stack and cause, which JSON.stringify would drop.
 */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

function serialise(value: unknown): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, stack: value.stack, cause: serialise(value.cause) };
  }
  return value;
}

/** `write` decides where a line goes (stdout for servers, stderr for CLIs); `base` is on every line. */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void,
  base: Record<string, unknown> = {},
): Logger {
  const log = (at: LogLevel, msg: string, fields: Record<string, unknown> = {}) => {
    if (rank[at] < rank[level]) return;
    const entry: Record<string, unknown> = { time: new Date().toISOString(), level: at, msg, ...base };
    for (const [key, value] of Object.entries(fields)) entry[key] = serialise(value);
    write(JSON.stringify(entry));
  };
  return {
    debug: (msg, fields) => log("debug", msg, fields),
    info: (msg, fields) => log("info", msg, fields),
    warn: (msg, fields) => log("warn", msg, fields),
    error: (msg, fields) => log("error", msg, fields),
  };
}

export const silentLogger: Logger = createLogger("error", () => {});

/**
 * The same logger with `fields` on every line (a call's own fields win): a Worker's id on all
 * it logs once registered, a job's and attempt's ids on everything one attempt logs.
 */
export function withFields(logger: Logger, fields: Record<string, unknown>): Logger {
  return {
    debug: (msg, own) => logger.debug(msg, { ...fields, ...own }),
    info: (msg, own) => logger.info(msg, { ...fields, ...own }),
    warn: (msg, own) => logger.warn(msg, { ...fields, ...own }),
    error: (msg, own) => logger.error(msg, { ...fields, ...own }),
  };
}
