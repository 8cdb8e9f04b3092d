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
