import { describe, expect, it } from "vitest";
import { jobExample, submitJobExample } from "./examples.ts";
import { JobSchema } from "./schema.ts";
import { SubmitJobBodySchema } from "./submit.ts";

describe("documented examples", () => {
  it("the submit example is a valid submission", () => {
    expect(SubmitJobBodySchema.safeParse(submitJobExample).error?.issues).toBeUndefined();
  });

  it("the job example is a valid job", () => {
    expect(JobSchema.safeParse(jobExample).error?.issues).toBeUndefined();
  });
});
