// Writes the Worker's phase section of docs/lifecycle.md from the phase table (`npm run gen`).
import { readFile, writeFile } from "node:fs/promises";
import { phaseSection, withPhaseSection } from "./phase-diagram.ts";

const pageUrl = new URL("../../../docs/lifecycle.md", import.meta.url);
const page = await readFile(pageUrl, "utf8");
const updated = withPhaseSection(page, phaseSection());
if (updated !== page) await writeFile(pageUrl, updated);
