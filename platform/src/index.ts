/** What both processes, the Manager and the Worker agent, run on. */
export { assertNever } from "./assert-never.ts";
export { withGeneratedSection } from "./generated-section.ts";
export { createLogger, LOG_LEVELS, type Logger, type LogLevel, silentLogger, withFields } from "./logger.ts";
