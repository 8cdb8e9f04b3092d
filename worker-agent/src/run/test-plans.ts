/** Plan outputs for the real-ffmpeg tests of this folder: a FILE output at s3://media-out/<id>.<container>. */
import type { PlanOutput } from "@tjm/protocol";

export const output = (
  id: string,
  container: PlanOutput["container"],
  fields: Partial<PlanOutput>,
): PlanOutput => ({
  id,
  kind: "FILE",
  container,
  destinationUri: `s3://media-out/${id}.${container}`,
  ...fields,
});
