/**
 * The Manager's Worker routes (/api/v1/worker/…) over HTTP. Failures come in three kinds,
 * because callers treat them differently: unavailable (network, timeout, 5xx, 429) is worth
 * retrying; refused (4xx) is an answer; an answer we cannot read is a protocol mismatch.
 */
import {
  type ChallengePurpose,
  decodeMessage,
  encodeMessage,
  PROTOCOL_VERSION,
  type WorkerChallenge,
  WorkerChallengeRequestSchema,
  WorkerChallengeSchema,
  type WorkerCredentials,
  type WorkerCredentialsRequest,
  WorkerCredentialsRequestSchema,
  WorkerCredentialsSchema,
  type WorkerRegistrationRequest,
  WorkerRegistrationRequestSchema,
  type WorkerRegistrationResponse,
  WorkerRegistrationResponseSchema,
  type WorkerReRegistrationRequest,
  WorkerReRegistrationRequestSchema,
} from "@tjm/protocol";
import type { z } from "zod";

/** The Manager could not be reached or could not answer now; trying again may work. */
export class ManagerUnavailableError extends Error {
  override name = "ManagerUnavailableError";
}

/** The Manager answered with a 4xx: the request, token or identity is refused. */
export class ManagerRefusedError extends Error {
  override name = "ManagerRefusedError";
  constructor(
    readonly status: number,
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** The Manager answered something this agent does not understand (another protocol version?). */
export class ManagerProtocolError extends Error {
  override name = "ManagerProtocolError";
}

/** 10 s: the routes do a few queries; beyond that the Manager or the path to it is stuck. */
export const REQUEST_TIMEOUT_MS = 10_000;

interface Route<Request extends z.ZodType, Answer extends z.ZodType> {
  /** Below /api/v1/worker/. */
  path: string;
  request: Request;
  answer: Answer;
}

const defineRoute = <Request extends z.ZodType, Answer extends z.ZodType>(
  path: string,
  request: Request,
  answer: Answer,
): Route<Request, Answer> => ({ path, request, answer });

const ROUTES = {
  register: defineRoute("registrations", WorkerRegistrationRequestSchema, WorkerRegistrationResponseSchema),
  challenge: defineRoute("challenges", WorkerChallengeRequestSchema, WorkerChallengeSchema),
  reRegister: defineRoute(
    "re-registrations",
    WorkerReRegistrationRequestSchema,
    WorkerRegistrationResponseSchema,
  ),
  refreshCredentials: defineRoute("credentials", WorkerCredentialsRequestSchema, WorkerCredentialsSchema),
};

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export class ManagerApi {
  private readonly base: string;

  constructor(
    managerUrl: string,
    private readonly fetchFn: Fetch = fetch,
  ) {
    this.base = managerUrl.endsWith("/") ? managerUrl : `${managerUrl}/`;
  }

  register(body: WorkerRegistrationRequest, timeoutMs?: number): Promise<WorkerRegistrationResponse> {
    return this.post(ROUTES.register, body, timeoutMs);
  }

  challenge(workerId: string, purpose: ChallengePurpose, timeoutMs?: number): Promise<WorkerChallenge> {
    return this.post(ROUTES.challenge, { protocolVersion: PROTOCOL_VERSION, workerId, purpose }, timeoutMs);
  }

  reRegister(body: WorkerReRegistrationRequest, timeoutMs?: number): Promise<WorkerRegistrationResponse> {
    return this.post(ROUTES.reRegister, body, timeoutMs);
  }

  refreshCredentials(body: WorkerCredentialsRequest, timeoutMs?: number): Promise<WorkerCredentials> {
    return this.post(ROUTES.refreshCredentials, body, timeoutMs);
  }

  private async post<Request extends z.ZodType, Answer extends z.ZodType>(
    route: Route<Request, Answer>,
    body: z.input<Request>,
    timeoutMs = REQUEST_TIMEOUT_MS,
  ): Promise<z.output<Answer>> {
    const url = new URL(`api/v1/worker/${route.path}`, this.base).href;
    // Validated before sending: an invalid request is this agent's bug, not the Manager's 400.
    const payload = encodeMessage(route.request, body);
    let response: Response;
    let text: string;
    try {
      response = await this.fetchFn(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: payload as Uint8Array<ArrayBuffer>,
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (err) {
      throw new ManagerUnavailableError(`POST ${url}: ${describeFetchError(err, timeoutMs)}`, { cause: err });
    }
    if (response.ok) {
      const decoded = decodeMessage(route.answer, new TextEncoder().encode(text));
      if (!decoded.ok)
        throw new ManagerProtocolError(`POST ${url} answered ${response.status}: ${decoded.reason}`);
      return decoded.value;
    }
    const problem = parseProblem(text);
    const message = `POST ${url} answered ${response.status}: ${problem.message ?? (text.slice(0, 200) || response.statusText)}`;
    if (response.status >= 500 || response.status === 429 || response.status === 408) {
      throw new ManagerUnavailableError(message);
    }
    throw new ManagerRefusedError(response.status, problem.message ?? message, problem.details);
  }
}

function parseProblem(text: string): { message?: string; details: { path: string; message: string }[] } {
  try {
    const body = JSON.parse(text) as { message?: unknown; details?: unknown };
    const details = Array.isArray(body.details)
      ? body.details.filter(
          (detail): detail is { path: string; message: string } =>
            typeof detail?.path === "string" && typeof detail?.message === "string",
        )
      : [];
    return { message: typeof body.message === "string" ? body.message : undefined, details };
  } catch {
    return { details: [] };
  }
}

function describeFetchError(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) {
    return `no answer within ${timeoutMs} ms`;
  }
  // Node and Bun put the socket error (ECONNREFUSED …) in `cause` or in the message.
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
  return `${err instanceof Error ? err.message : String(err)}${cause}`;
}
