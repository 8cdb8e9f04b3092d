/**
 * Just enough HTML reading to fill a provider's sign-in and consent pages headlessly: the forms
 * (action, method, fields, submit buttons) and the text of a `role="alert"` element. Regular
 * expressions suffice because the pages are the provider's own, simple markup.
 */

export interface HtmlForm {
  /** Absolute: resolved against the page's URL, entities decoded. */
  action: string;
  method: string;
  /** Every named input that a browser submits by default (hidden, text, password, …). */
  fields: Record<string, string>;
  /** Named submit buttons and inputs, in page order: a browser sends only the one clicked. */
  submits: { name: string; value: string }[];
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
};

export function unescapeHtml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, body: string) => {
    if (body[0] === "#") {
      const codePoint =
        body[1] === "x" || body[1] === "X" ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : entity;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? entity;
  });
}

function attributesOf(tagBody: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const match of tagBody.matchAll(/([^\s"'=<>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
    const name = (match[1] as string).toLowerCase();
    if (!(name in attributes)) attributes[name] = unescapeHtml(match[2] ?? match[3] ?? match[4] ?? "");
  }
  return attributes;
}

/** Input types a browser leaves out unless they are the control clicked (or are checked). */
const NOT_SUBMITTED_BY_DEFAULT = new Set(["submit", "image", "button", "reset", "file", "checkbox", "radio"]);

export function parseForms(html: string, pageUrl: string | URL): HtmlForm[] {
  const forms: HtmlForm[] = [];
  for (const match of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form\s*>/gi)) {
    const formAttributes = attributesOf(match[1] as string);
    const form: HtmlForm = {
      action: new URL(formAttributes.action || pageUrl.toString(), pageUrl).toString(),
      method: (formAttributes.method || "get").toLowerCase(),
      fields: {},
      submits: [],
    };
    for (const control of (match[2] as string).matchAll(/<(input|button)\b([^>]*)>/gi)) {
      const attributes = attributesOf(control[2] as string);
      const name = attributes.name;
      if (name === undefined || name === "") continue;
      const isButton = (control[1] as string).toLowerCase() === "button";
      const type = (attributes.type ?? (isButton ? "submit" : "text")).toLowerCase();
      const value = attributes.value ?? "";
      if (type === "submit" || type === "image") form.submits.push({ name, value });
      else if (!isButton && (!NOT_SUBMITTED_BY_DEFAULT.has(type) || "checked" in attributes)) {
        form.fields[name] = value;
      }
    }
    forms.push(form);
  }
  return forms;
}

/** The text of the first `role="alert"` element, tags stripped and whitespace collapsed. */
export function alertText(html: string): string | undefined {
  for (const opening of html.matchAll(/<([a-z][a-z0-9]*)\b([^>]*)>/gi)) {
    if (attributesOf(opening[2] as string).role !== "alert") continue;
    const start = (opening.index as number) + opening[0].length;
    return unescapeHtml(
      html.slice(start, closingTagIndex(html, opening[1] as string, start)).replace(/<[^>]*>/g, " "),
    )
      .replace(/\s+/g, " ")
      .trim();
  }
  return undefined;
}

/** Where the element opened just before `from` ends, counting nested elements of the same name. */
function closingTagIndex(html: string, tagName: string, from: number): number {
  const tags = new RegExp(`<(/?)${tagName}\\b[^>]*>`, "gi");
  tags.lastIndex = from;
  let depth = 1;
  for (let tag = tags.exec(html); tag !== null; tag = tags.exec(html)) {
    depth += tag[1] === "/" ? -1 : 1;
    if (depth === 0) return tag.index;
  }
  return html.length;
}
