// Writes the lifecycle section of docs/lifecycle.md from the transition table (`npm run gen`).
import { readFile, writeFile } from "node:fs/promises";
import { lifecycleSection, withLifecycleSection } from "./diagram.ts";

const pageUrl = new URL("../../../docs/lifecycle.md", import.meta.url);
const page = await readFile(pageUrl, "utf8");
const updated = withLifecycleSection(page, lifecycleSection());
if (updated !== page) await writeFile(pageUrl, updated);
