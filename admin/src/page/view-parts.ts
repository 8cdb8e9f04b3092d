/**
 * What several views write alike: a select's options, a table's header row, the pager under a
 * list, a form field with the list of its problems, and a section's status line with its "sign in
 * again" offer. The ids the page's scripts find come from element-ids.js.
 */
import { type PageContext, pageTexts } from "../pages/layout.ts";
import type { ConsoleKey } from "../pages/messages.ts";
import { errorsId, headingId, ids, reauthId, type Section, statusId } from "./element-ids.js";

export type Texts = ReturnType<typeof pageTexts>;

export function options(values: readonly string[], anyLabel: string): string {
  return [
    `<option value="">${anyLabel}</option>`,
    ...values.map((v) => `<option value="${v}">${v}</option>`),
  ].join("");
}

/** The pager under a list's table (pager.js runs it); `label` names what it pages through. */
export function pager(context: PageContext, label: ConsoleKey): string {
  const t = pageTexts(context);
  return `<nav class="pager" aria-label="${t(label)}">
<button type="button" id="${ids.pagerPrevious}">${t("common.previousPage")}</button>
<span id="${ids.pagerPosition}"></span>
<button type="button" id="${ids.pagerNext}">${t("common.nextPage")}</button>
</nav>`;
}

export const headers = (t: Texts, keys: ConsoleKey[]) =>
  `<thead><tr>${keys.map((key) => `<th scope="col">${t(key)}</th>`).join("")}</tr></thead>`;

/**
 * A form field: its label, its control (HTML, whose id is `id` and which names the list of its
 * problems, `errorsId(id)`, in its aria-describedby), and that list. `kind` is its class.
 */
export const field = (id: string, label: string, control: string, kind = "field") =>
  `<div class="${kind}"><label for="${id}">${label}</label>
${control}
<ul id="${errorsId(id)}" class="field-errors"></ul></div>`;

/** A section's status line, announced when the script writes it, and its sign-in-again button. */
export const sectionStatus = (section: Section, signInLabel: string) =>
  `<p id="${statusId(section)}" class="status" role="status"></p>
<p class="reauth" id="${reauthId(section)}" hidden><button type="button" class="secondary">${signInLabel}</button></p>`;

/** A section's opening tag and its heading, which the section is labelled by. */
export const sectionOpening = (section: Section, heading: string, attributes = "") =>
  `<section id="${section}" aria-labelledby="${headingId(section)}"${attributes}><h2 id="${headingId(section)}">${heading}</h2>`;
