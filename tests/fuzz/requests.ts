/**
 * For each operation, an arbitrary of whole requests (path and query parameters from their
 * schemas, known ids or hostile values; a body; a token of any kind) and how to send one and
 * describe it in a failure.
 */
import fc from "fast-check";
import { type SchemaContext, schemaArbitrary } from "./arbitraries.ts";
import { type BodyChoice, bodyChoice, bodyText } from "./bodies.ts";
import { anyJson, hostileText } from "./hostile-values.ts";
import type { Operation, Parameter } from "./operations.ts";
import { authorizationHeader, type MintedTokens, type TokenChoice, tokenChoice } from "./tokens.ts";

/** A path or query value: mostly from its schema (and the known ones), else anything at all. */
function parameterValue(parameter: Parameter, context: SchemaContext): fc.Arbitrary<unknown> {
  const fromSchema = schemaArbitrary(
    parameter.schema,
    context,
    `${parameter.in} parameter ${parameter.name}`,
  );
  const known = context.known?.(parameter.name);
  const { example } = parameter;
  return fc.oneof(
    ...(known ? [{ weight: 4, arbitrary: known }] : []),
    // A schema may say less than the route checks ("1..100" only in a description).
    ...(example === undefined ? [] : [{ weight: 2, arbitrary: fc.constant(example) }]),
    { weight: 4, arbitrary: fromSchema },
    { weight: 1, arbitrary: hostileText },
    { weight: 1, arbitrary: anyJson },
  );
}

const asText = (value: unknown) => (typeof value === "string" ? value : (JSON.stringify(value) ?? ""));

/** A query parameter's pairs: an array repeated (form, explode) or comma-joined; anything else once. */
function queryPairs(parameter: Parameter, context: SchemaContext): fc.Arbitrary<[string, string][]> {
  return fc
    .tuple(parameterValue(parameter, context), fc.boolean())
    .map(([value, repeat]) =>
      Array.isArray(value) && repeat
        ? value.map((item): [string, string] => [parameter.name, asText(item)])
        : [[parameter.name, Array.isArray(value) ? value.map(asText).join(",") : asText(value)]],
    );
}

export interface FuzzRequest {
  token: TokenChoice;
  /** Raw values, percent-encoded when sent. */
  path: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  body: BodyChoice;
}

/** A path segment must not be a dot segment: the URL parser would remove it before sending. */
const notDotSegment = (value: string) => value !== "" && value !== "." && value !== "..";

export function requestArbitrary(
  operation: Operation,
  context: SchemaContext,
  bodyLimit: number,
): fc.Arbitrary<FuzzRequest> {
  const byLocation = (location: Parameter["in"]) => operation.parameters.filter((p) => p.in === location);
  const path = fc.record(
    Object.fromEntries(
      byLocation("path").map((parameter) => [
        parameter.name,
        parameterValue(parameter, context).map(asText).filter(notDotSegment),
      ]),
    ),
  ) as fc.Arbitrary<Record<string, string>>;
  const unknownQuery = fc.oneof(
    { weight: 4, arbitrary: fc.constant<[string, string][]>([]) },
    { weight: 1, arbitrary: fc.array(fc.tuple(hostileText, hostileText), { minLength: 1, maxLength: 2 }) },
  );
  const query = fc
    .tuple(
      fc.tuple(
        // Each parameter in half the requests, so most requests are valid as a whole.
        ...byLocation("query").map((parameter) =>
          fc.option(queryPairs(parameter, context), { freq: 2, nil: [] }),
        ),
      ),
      unknownQuery,
    )
    .map(([documented, unknown]) => [...documented.flat(), ...unknown]);
  const headers = fc.record(
    Object.fromEntries(
      byLocation("header").map((parameter) => [
        parameter.name,
        fc.oneof(parameterValue(parameter, context).map(asText), fc.constant("")),
      ]),
    ),
    { requiredKeys: [] },
  ) as fc.Arbitrary<Record<string, string>>;
  return fc.record({
    token: tokenChoice(operation.security),
    path,
    query,
    headers,
    body: bodyChoice(operation, context, bodyLimit),
  });
}

/**
 * Percent-encodes every UTF-8 byte but the unreserved ASCII ones (RFC 3986), so ids stay
 * readable in a failure; encodeURIComponent would throw on a lone surrogate.
 */
function percentEncode(text: string): string {
  return [...new TextEncoder().encode(text)]
    .map((byte) => {
      const character = String.fromCharCode(byte);
      return /[A-Za-z0-9._~-]/.test(character) ? character : `%${byte.toString(16).padStart(2, "0")}`;
    })
    .join("");
}

export function urlOf(operation: Operation, request: FuzzRequest): string {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    percentEncode(request.path[name] ?? ""),
  );
  const query = request.query.map(([key, value]) => `${percentEncode(key)}=${percentEncode(value)}`);
  return query.length > 0 ? `${path}?${query.join("&")}` : path;
}

export function requestInit(
  operation: Operation,
  request: FuzzRequest,
  tokens: MintedTokens,
  signal?: AbortSignal,
): RequestInit {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) headers.set(name, value);
  const authorization = authorizationHeader(request.token, tokens);
  if (authorization !== undefined) headers.set("authorization", authorization);
  const body = bodyText(request.body);
  if (body?.contentType) headers.set("content-type", body.contentType);
  // Without a content type fetch would label a string text/plain.
  const payload = body === undefined ? undefined : new Blob([body.text]);
  return { method: operation.method, headers, body: payload, signal };
}

/** The request for a failure message: what was sent, the token by its kind only. */
export function describeRequest(operation: Operation, request: FuzzRequest): string {
  const body = bodyText(request.body);
  const token =
    request.token.kind === "malformed"
      ? `malformed ${JSON.stringify(request.token.header)}`
      : request.token.kind;
  const excerpt =
    body === undefined ? "(none)" : `${body.text.length} chars ${JSON.stringify(body.text.slice(0, 300))}`;
  return [
    `${operation.method} ${urlOf(operation, request)}`,
    `token: ${token}`,
    `headers: ${JSON.stringify(request.headers)}`,
    `content-type: ${body?.contentType ?? "(none)"}`,
    `body: ${excerpt}`,
  ].join("\n  ");
}
