import type { Sql } from "../platform/db.ts";
import type { Logger } from "../platform/logger.ts";
import type { LiveProgress } from "./view.ts";

export interface JobsDeps {
  sql: Sql;
  logger: Logger;
  liveProgress: LiveProgress;
}
