/**
 * The plan cannot be carried out on this input (INPUT_INCOMPATIBLE: it asks for audio the
 * input does not have, or removes all of it) or is one the Manager should have refused
 * (PLAN_UNSUPPORTED). The Worker reports the code as the attempt's failure.
 */
export class PlanNotApplicableError extends Error {
  override name = "PlanNotApplicableError";
  constructor(
    message: string,
    readonly failureCode: "INPUT_INCOMPATIBLE" | "PLAN_UNSUPPORTED",
  ) {
    super(message);
  }
}

/**
 * ffmpeg's own word that the input lacks a stream the command names ("Stream map '0:a:1'
 * matches no streams.", "Stream specifier ':V:0' in filtergraph description … matches no
 * streams."), as INPUT_INCOMPATIBLE; undefined for any other failure. Only the input's video
 * (`0:V:0`) and audio (`0:a:N`) specifiers count: a subtitle or watermark file is not the input.
 */
export function missingStreamError(stderr: string): PlanNotApplicableError | undefined {
  for (const line of stderr.split("\n")) {
    if (!line.includes("matches no streams")) continue;
    const spec =
      /^Stream map '0:(V:0|a:\d+)'/.exec(line.trim())?.[1] ??
      /^Stream specifier ':(V:0|a:\d+)' in filtergraph description /.exec(line.trim())?.[1];
    if (spec === undefined) continue;
    const message =
      spec === "V:0"
        ? "an output asks for video but the input has none"
        : `an output asks for audio stream ${spec.slice(2)} but the input has no such audio stream`;
    return new PlanNotApplicableError(
      `${message} (ffmpeg: ${spec} matches no streams)`,
      "INPUT_INCOMPATIBLE",
    );
  }
  return undefined;
}
