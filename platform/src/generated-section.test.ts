import { describe, expect, it } from "vitest";
import { withGeneratedSection } from "./generated-section.ts";

const markers = { start: "<!-- s -->", end: "<!-- e -->" };

describe("withGeneratedSection", () => {
  it("replaces the section, markers included, and keeps the rest", () => {
    const page = "before\n<!-- s -->\nold\n<!-- e -->\nafter\n";
    expect(withGeneratedSection(page, markers, "<!-- s -->\nnew\n<!-- e -->", "page.md")).toBe(
      "before\n<!-- s -->\nnew\n<!-- e -->\nafter\n",
    );
  });

  it("names the page and the markers it lacks", () => {
    expect(() => withGeneratedSection("no markers", markers, "x", "docs/page.md")).toThrow(
      "docs/page.md needs <!-- s --> … <!-- e -->",
    );
  });
});
