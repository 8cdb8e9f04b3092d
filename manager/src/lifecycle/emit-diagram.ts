// Writes the lifecycle section of README.md from the transition table (`npm run gen`).
import { readFile, writeFile } from "node:fs/promises";
import { lifecycleSection, withLifecycleSection } from "./diagram.ts";

const readmeUrl = new URL("../../../README.md", import.meta.url);
const readme = await readFile(readmeUrl, "utf8");
const updated = withLifecycleSection(readme, lifecycleSection());
if (updated !== readme) await writeFile(readmeUrl, updated);
