import { describe, expect, it } from "vitest";
import { END_MARKER, lifecycleSection, START_MARKER, withLifecycleSection } from "./diagram.ts";
import { ATTEMPT_STATES, JOB_STATES } from "./states.ts";
import { TRANSITIONS } from "./transitions.ts";

const section = lifecycleSection();
const [jobDiagram = "", attemptDiagram = ""] = [...section.matchAll(/```mermaid\n([\s\S]*?)```/g)].map(
  (match) => match[1] as string,
);
const edges = (diagram: string) =>
  diagram
    .split("\n")
    .filter((line) => line.includes("-->"))
    .map((line) => line.trim());

describe("the lifecycle diagrams", () => {
  it("draw every job state and every attempt state", () => {
    for (const state of JOB_STATES) expect(jobDiagram).toContain(state);
    for (const state of ATTEMPT_STATES) expect(attemptDiagram).toContain(state);
  });

  it("label transitions only with text Mermaid reads to the end (no ':' or ';' inside)", () => {
    for (const edge of [...edges(jobDiagram), ...edges(attemptDiagram)]) {
      const [, label = ""] = edge.split(" : ");
      expect(label, edge).not.toMatch(/[:;]/);
    }
  });

  it("show where a job starts, completes and is retried, and where an attempt succeeds", () => {
    expect(edges(jobDiagram)).toEqual(
      expect.arrayContaining([
        "[*] --> QUEUED : submit",
        "RUNNING --> COMPLETED : promotion-done",
        "FAILED --> QUEUED : retry",
        "QUEUED --> QUEUED : failure (next attempt)",
        "COMPLETED --> [*]",
      ]),
    );
    expect(edges(attemptDiagram)).toEqual(
      expect.arrayContaining([
        "[*] --> CREATED : submit, failure (next attempt), retry",
        "UPLOADING --> UPLOADING : report completed",
        "UPLOADING --> SUCCEEDED : promotion-done",
        "SUCCEEDED --> [*]",
      ]),
    );
  });

  it("draw only pairs a job can reach: no lease is accepted for a job whose cancel is pending", () => {
    expect(edges(jobDiagram).filter((edge) => edge.startsWith("CANCEL_REQUESTED --> RUNNING"))).toEqual([]);
  });

  it("come with a table row for every transition", () => {
    for (const row of TRANSITIONS) expect(section).toContain(`| ${row.name} | \`${row.trigger}\` |`);
  });
});

describe("withLifecycleSection", () => {
  const readme = `# TJM\n\nbefore\n${START_MARKER}\nold\n${END_MARKER}\nafter\n`;

  it("replaces what lies between the markers, markers included, and nothing else", () => {
    const updated = withLifecycleSection(readme, section);
    expect(updated).toBe(`# TJM\n\nbefore\n${section}\nafter\n`);
    expect(withLifecycleSection(updated, section)).toBe(updated);
  });

  it("refuses a README without the markers", () => {
    expect(() => withLifecycleSection("# TJM\n", section)).toThrow(START_MARKER);
  });
});
