/**
 * What every answer of every route must be: a status the operation documents, no 5xx but a
 * documented 503, a content type and body that match the documented schema for that status,
 * and the error shape (platform/errors.ts) on every error.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { type OpenApiDocument, type Operation, pointerEscape } from "./operations.ts";

const DOCUMENT_ID = "tjm-openapi";

export interface Answer {
  status: number;
  contentType: string | null;
  /** Parsed JSON, when the content type is JSON and the text parses. */
  json?: unknown;
  text: string;
  wwwAuthenticate: string | null;
}

/**
 * Validators for the document's response schemas. The document is registered whole (OpenAPI
 * 3.1 schemas are JSON Schema 2020-12), so a schema is compiled by its JSON pointer and its
 * `#/components/...` references resolve against the document.
 */
export class ResponseValidators {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    // Not strict: the document's root (openapi, info, paths) is not a schema, and "example" is
    // an OpenAPI annotation ajv does not know.
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(this.ajv);
    this.ajv.addSchema(document as object, DOCUMENT_ID);
  }

  validator(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }

  errorsText(validate: ValidateFunction): string {
    return this.ajv.errorsText(validate.errors, { dataVar: "body" });
  }
}

/** "application/json; charset=utf-8" → "application/json". */
export const mediaTypeOf = (contentType: string | null) =>
  contentType?.split(";")[0]?.trim().toLowerCase() ?? null;

/** Documented statuses that are a dependency failure; any other 5xx is a bug. */
const DEPENDENCY_FAILURES = new Set([503]);

/** Every broken invariant of the answer (empty when it is as documented). */
export function answerProblems(
  operation: Operation,
  answer: Answer,
  validators: ResponseValidators,
): string[] {
  const problems: string[] = [];
  const documentedKey = String(answer.status) in operation.responses ? String(answer.status) : "default";
  const documented = operation.responses[documentedKey];
  if (!documented) {
    problems.push(
      `status ${answer.status} is not documented (documented: ${Object.keys(operation.responses).join(", ")})`,
    );
  }
  if (
    answer.status >= 500 &&
    !(DEPENDENCY_FAILURES.has(answer.status) && documentedKey !== "default" && documented)
  ) {
    problems.push(`a ${answer.status}, and only a documented 503 (a dependency failure) may be a 5xx`);
  }
  if (answer.status >= 400) problems.push(...errorShapeProblems(answer));
  if (!documented) return problems;
  const content = documented.content ?? {};
  const mediaType = mediaTypeOf(answer.contentType);
  if (Object.keys(content).length === 0) {
    if (answer.text !== "")
      problems.push(`a body where the document names none: ${answer.text.slice(0, 200)}`);
    return problems;
  }
  if (mediaType === null || !(mediaType in content)) {
    problems.push(`content type ${answer.contentType} is not one of ${Object.keys(content).join(", ")}`);
    return problems;
  }
  // A stream's body is its events; the status and content type are what is checked here.
  if (mediaType === "text/event-stream" || !content[mediaType]?.schema) return problems;
  if (answer.json === undefined) {
    problems.push(`the body is not JSON: ${answer.text.slice(0, 200)}`);
    return problems;
  }
  const pointer = `${operation.pointer}/responses/${pointerEscape(documentedKey)}/content/${pointerEscape(mediaType)}/schema`;
  const validate = validators.validator(pointer);
  if (!validate(answer.json)) {
    problems.push(`the body does not match the documented schema: ${validators.errorsText(validate)}`);
  }
  return problems;
}

function errorShapeProblems(answer: Answer): string[] {
  const body = answer.json as {
    statusCode?: unknown;
    error?: unknown;
    message?: unknown;
    code?: unknown;
    requestId?: unknown;
    details?: unknown;
  };
  if (typeof body !== "object" || body === null)
    return [`an error without the error body: ${answer.text.slice(0, 200)}`];
  const problems: string[] = [];
  if (body.statusCode !== answer.status)
    problems.push(`statusCode ${String(body.statusCode)} in a ${answer.status}`);
  if (typeof body.error !== "string" || body.error === "") problems.push("an error body without `error`");
  if (typeof body.message !== "string" || body.message === "")
    problems.push("an error body without `message`");
  if (typeof body.code !== "string" || !/^[a-z]+(\.[a-z_]+)+$/.test(body.code))
    problems.push("an error body without a dotted `code`");
  if (typeof body.requestId !== "string" || body.requestId === "")
    problems.push("an error body without `requestId`");
  if (answer.status === 400 && (!Array.isArray(body.details) || body.details.length === 0)) {
    problems.push("a 400 without the details of what failed");
  }
  return problems;
}
