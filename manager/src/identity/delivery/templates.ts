/**
 * The messages TJM sends and how each is rendered, from the messages catalogues: an e-mail as
 * HTML and plain text in the recipient's locale, an SMS as one text. Pure: data in, text out.
 */

import { type Catalogue, compileCatalogues } from "@tjm/platform/catalogue";
import { escapeHtml } from "@tjm/platform/html";
import type { Locale } from "@tjm/platform/locale";
import english from "./messages/en.json" with { type: "json" };
import persian from "./messages/fa.json" with { type: "json" };
import dari from "./messages/fa-AF.json" with { type: "json" };
import pashto from "./messages/ps.json" with { type: "json" };

export type MessageKey = keyof typeof english;

export const messageCatalogues = compileCatalogues<MessageKey>("messages", {
  en: english,
  fa: persian,
  "fa-AF": dari,
  ps: pashto,
});

/** What each template takes, beside `service` (the sender's name) which every message gets. */
export interface TemplateParams {
  "verification-code": { code: string; minutes: number };
  "recovery-code": { code: string; minutes: number };
  "mfa-code": { code: string; minutes: number };
  "password-changed": { when: Date };
  "new-sign-in": { when: Date; client: string; address: string };
  /** To the e-mail address the account had: its e-mail address or phone number changed. */
  "identifier-changed": { when: Date; channel: "email" | "phone"; change: "changed" | "removed" };
  /** To the account's e-mail address: a second factor of sign-in was added or removed. */
  "factor-changed": { when: Date; factor: "totp" | "sms" | "email"; change: "added" | "removed" };
}

export type TemplateName = keyof TemplateParams;

interface TemplateSpec {
  /** The catalogue prefix of its texts: `<prefix>.subject`, `.intro`, `.expiry`, `.ignore`, `.sms`. */
  prefix: string;
  /** Its params hold a code: the stored body and params are deleted once sent, failed or expired. */
  holdsCode: boolean;
}

export const TEMPLATES: Record<TemplateName, TemplateSpec> = {
  "verification-code": { prefix: "verificationCode", holdsCode: true },
  "recovery-code": { prefix: "recoveryCode", holdsCode: true },
  "mfa-code": { prefix: "mfaCode", holdsCode: true },
  "password-changed": { prefix: "passwordChanged", holdsCode: false },
  "new-sign-in": { prefix: "newSignIn", holdsCode: false },
  "identifier-changed": { prefix: "identifierChanged", holdsCode: false },
  "factor-changed": { prefix: "factorChanged", holdsCode: false },
};

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

export interface RenderedSms {
  text: string;
}

/** Params as stored (JSON): dates as ISO strings; turned back into what the catalogue formats. */
export type StoredParams = Record<string, string | number>;

function catalogueOf(locale: Locale): Catalogue<MessageKey> {
  return messageCatalogues.get(locale) as Catalogue<MessageKey>;
}

function values(params: StoredParams, service: string): Record<string, string | number | Date> {
  const out: Record<string, string | number | Date> = { service };
  for (const [name, value] of Object.entries(params)) out[name] = name === "when" ? new Date(value) : value;
  return out;
}

const key = (template: TemplateName, part: string) => `${TEMPLATES[template].prefix}.${part}` as MessageKey;

/** Glyphs for Persian, Dari and Pashto (ټ ډ ړ ښ ږ ګ ڼ ۍ ې) first, then what every system has. */
export const ARABIC_SCRIPT_FONTS = `"Noto Naskh Arabic","Noto Sans Arabic",Vazirmatn,Tahoma,sans-serif`;
const LATIN_FONTS = `-apple-system,"Segoe UI",Roboto,"Noto Sans",Arial,sans-serif`;

export interface RenderInput {
  template: TemplateName;
  locale: Locale;
  params: StoredParams;
  /** The sender's name (MESSAGE_SERVICE_NAME). */
  service: string;
  /** Shown in the footer: a resend carries the same one. */
  reference: string;
}

/**
 * The e-mail: subject, plain text and an HTML document with `lang` and `dir` (right to left in
 * fa, fa-AF and ps) and a font stack that has the script's glyphs. The code stands alone, left
 * to right, in Latin digits, so it reads and copies the same in every locale.
 */
export function renderEmail(input: RenderInput): RenderedEmail {
  const { template, locale } = input;
  const catalogue = catalogueOf(locale);
  const v = values(input.params, input.service);
  const code = typeof input.params.code === "string" ? input.params.code : undefined;
  const paragraphs = [catalogue.text(key(template, "intro"), v)];
  const after = TEMPLATES[template].holdsCode
    ? [catalogue.text(key(template, "expiry"), v), catalogue.text(key(template, "ignore"), v)]
    : [catalogue.text(key(template, "ignore"), v)];
  const footer = catalogue.text("email.footer", { service: input.service, reference: input.reference });
  const subject = catalogue.text(key(template, "subject"), v);
  const text = [
    ...paragraphs,
    ...(code === undefined ? [] : [catalogue.text("email.codeLine", { code })]),
    ...after,
    "--",
    footer,
  ].join("\n\n");
  const fonts = catalogue.direction === "rtl" ? ARABIC_SCRIPT_FONTS : LATIN_FONTS;
  const codeBlock =
    code === undefined
      ? ""
      : `<p style="margin:24px 0"><span style="display:block;font-size:14px;color:#4b5563">${escapeHtml(catalogue.text("email.codeLabel"))}</span><strong dir="ltr" style="display:inline-block;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:28px;letter-spacing:4px">${escapeHtml(code)}</strong></p>\n`;
  const paragraph = (content: string) => `<p style="margin:0 0 16px">${escapeHtml(content)}</p>\n`;
  const html = `<!doctype html>
<html lang="${locale}" dir="${catalogue.direction}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(subject)}</title>
</head>
<body style="margin:0;padding:24px;background:#ffffff;color:#1f2328;font-family:${escapeHtml(fonts)};font-size:16px;line-height:1.6">
<div dir="${catalogue.direction}" style="max-width:560px;margin:0 auto;text-align:start">
${paragraphs.map(paragraph).join("")}${codeBlock}${after.map(paragraph).join("")}<hr style="border:0;border-top:1px solid #d0d7de;margin:24px 0">
<p style="margin:0;font-size:13px;color:#4b5563">${escapeHtml(footer)}</p>
</div>
</body>
</html>
`;
  return { subject, text, html };
}

/** The SMS: one text in the recipient's locale. */
export function renderSms(input: RenderInput): RenderedSms {
  return {
    text: catalogueOf(input.locale).text(key(input.template, "sms"), values(input.params, input.service)),
  };
}
