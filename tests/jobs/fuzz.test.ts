/**
 * Property-based fuzzing of the job routes: near-valid submissions broken in every way we
 * can think of, arbitrary JSON, random ids and random list queries. Whatever arrives, the
 * Manager answers with a client error it explains, never a 5xx, and never stores half a job.
 */

import { samplePlan, sampleSubmission } from "@tjm/devstack/fixtures/plans";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WORKER_POOLS } from "../../manager/src/jobs/plan.ts";
import { JOB_STATES } from "../../manager/src/lifecycle/index.ts";
import { TestManager } from "../harness/manager.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

const JOBS = "/api/v1/operations/jobs";
const RUNS = 250;
const PROPERTY_TIMEOUT_MS = 60_000;

let manager: TestManager;
let projectId: string;
/** Jobs made on purpose, so cancel and retry sometimes hit a real job. */
const seededJobIds: string[] = [];
/** Every job a fuzzed request was answered 201 for. */
const fuzzedJobIds = new Set<string>();

/** A submission using every optional part of a plan, so mutations reach every rule. */
function fullSubmission(): Json {
  const [videoOutput] = samplePlan().outputs;
  return {
    projectId,
    priority: 10,
    requirements: { requiredCapabilities: ["libx264", "aac"] },
    executionPlan: samplePlan({
      outputs: [
        videoOutput,
        {
          id: "audio",
          kind: "FILE",
          container: "mp4",
          destinationUri: "s3://media-out/movies/42/audio.m4a",
          audio: { codec: "aac", bitrateKbps: 192 },
        },
      ],
      transforms: {
        removedSegments: [
          { startMs: 0, endMs: 15_000 },
          { startMs: 60_000, endMs: 65_000 },
        ],
        subtitles: [
          { uri: "s3://media-in/movies/42/en.srt", language: "en", mode: "SOFT" },
          { uri: "s3://media-in/movies/42/fa.srt", language: "fa", mode: "BURN_IN" },
        ],
        audioTracks: [{ streamIndex: 0, language: "en" }],
        watermark: {
          uri: "s3://media-in/brand/logo.png",
          position: "top-right",
          marginPx: 8,
          opacity: 0.8,
          widthPercent: 10,
        },
      },
      workspace: { rootDirectory: "/var/lib/tjm/work" },
      manifestUri: "s3://media-out/movies/42/manifest.json",
    }),
  } as Json;
}

async function submit(body: Json): Promise<Response> {
  return manager.request(JOBS, { method: "POST", json: body });
}

beforeAll(async () => {
  manager = await TestManager.start();
  ({ projectId } = await manager.createProject());
  for (const body of [sampleSubmission(projectId) as Json, fullSubmission()]) {
    const response = await submit(body);
    expect(response.status).toBe(201);
    seededJobIds.push((await response.json()).id);
  }
});
afterAll(() => manager?.close());

// ---- generators --------------------------------------------------------------------------

/** One character of hostile text: any grapheme, a lone UTF-16 surrogate, or a classic troublemaker. */
const hostileCharacter = fc.oneof(
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)),
  fc.constantFrom("\u0000", "\u0001", "\u202e", "\ufeff", "\u{1f600}", "/", "..", "%00", "'", '"', "\\"),
);
const hostileText = fc.string({ unit: hostileCharacter, maxLength: 24 });

const hugeNumber = fc.constantFrom(
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER + 2,
  Number.MIN_SAFE_INTEGER - 2,
  2 ** 31,
  -(2 ** 31) - 1,
  0.5,
  -0,
  5e-324,
);

/**
 * Built iteratively. Kept to 1000 levels so fast-check can still print a counterexample;
 * deeper bombs go as raw text (deeplyNestedText).
 */
const deeplyNested = fc.tuple(fc.integer({ min: 50, max: 1_000 }), fc.boolean()).map(([depth, asArray]) => {
  let value: Json = null;
  for (let level = 0; level < depth; level++) value = asArray ? [value] : { nested: value };
  return value;
});

/** A submission whose plan is nested arrays up to 200,000 deep: 400 kB, under the body limit. */
const deeplyNestedText = () =>
  fc
    .integer({ min: 1_000, max: 200_000 })
    .map((depth) => `{"projectId":"${projectId}","executionPlan":${"[".repeat(depth)}${"]".repeat(depth)}}`);

const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  fc.jsonValue() as fc.Arbitrary<Json>,
  hugeNumber,
  hostileText,
  deeplyNested,
  fc.constantFrom<Json>(null, true, false, 0, "", [], {}, "__proto__"),
);

const hostileKey = fc.oneof(fc.constantFrom("__proto__", "constructor", "toString", "", "0"), hostileText);

type Mutation =
  | { kind: "delete"; pick: number }
  | { kind: "replace"; pick: number; value: Json }
  | { kind: "wrap-in-array"; pick: number }
  | { kind: "append-to-string"; pick: number; suffix: string }
  | { kind: "add-key"; pick: number; key: string; value: Json };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("replace" as const), pick: fc.nat(), value: hostileValue }),
  fc.record({ kind: fc.constant("wrap-in-array" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("append-to-string" as const), pick: fc.nat(), suffix: hostileText }),
  fc.record({ kind: fc.constant("add-key" as const), pick: fc.nat(), key: hostileKey, value: hostileValue }),
);

const isObject = (value: Json): value is { [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Deeper than any field of a submission; stops mutations from wandering down a nested bomb. */
const MUTATION_DEPTH = 10;

/** Every place in a JSON value down to MUTATION_DEPTH, the root included, as the keys leading there. */
function pathsOf(value: Json, at: Path = []): Path[] {
  if (at.length >= MUTATION_DEPTH) return [at];
  const children: [string | number, Json][] = Array.isArray(value)
    ? value.map((child, index) => [index, child])
    : isObject(value)
      ? Object.entries(value)
      : [];
  return [at, ...children.flatMap(([key, child]) => pathsOf(child, [...at, key]))];
}

function valueAt(root: Json, path: Path): Json {
  return path.reduce<Json>((value, key) => (value as Record<string | number, Json>)[key] as Json, root);
}

/** Sets (or with `undefined`, removes) the value at a path; the root itself is replaced. */
function withValueAt(root: Json, path: Path, value: Json | undefined): Json | undefined {
  if (path.length === 0) return value;
  const parent = valueAt(root, path.slice(0, -1)) as Record<string | number, Json> & Json[];
  const key = path[path.length - 1] as string | number;
  if (value !== undefined) parent[key] = value;
  else if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key];
  return root;
}

/** Changes `root` in place; generated values are copied in, since fast-check reuses them while shrinking. */
function applyMutation(root: Json, change: Mutation): Json {
  const all = pathsOf(root);
  const choose = (paths: Path[]) => paths[change.pick % paths.length];
  switch (change.kind) {
    case "delete": {
      const path = choose(all.filter((candidate) => candidate.length > 0));
      return path ? (withValueAt(root, path, undefined) ?? null) : root;
    }
    case "replace":
      return withValueAt(root, choose(all) ?? [], structuredClone(change.value)) ?? null;
    case "wrap-in-array": {
      const path = choose(all) ?? [];
      return withValueAt(root, path, [valueAt(root, path)]) ?? null;
    }
    case "append-to-string": {
      const path = choose(all.filter((candidate) => typeof valueAt(root, candidate) === "string"));
      return path ? (withValueAt(root, path, `${valueAt(root, path)}${change.suffix}`) ?? null) : root;
    }
    case "add-key": {
      const path = choose(all.filter((candidate) => isObject(valueAt(root, candidate))));
      if (!path) return root;
      // defineProperty, so "__proto__" becomes an own key as JSON.parse on the server makes it.
      Object.defineProperty(valueAt(root, path), change.key, {
        value: structuredClone(change.value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return root;
    }
  }
}

const mutatedSubmission = (): fc.Arbitrary<Json> =>
  fc
    .tuple(fc.boolean(), fc.array(mutation, { minLength: 1, maxLength: 4 }))
    .map(([full, changes]) =>
      changes.reduce(applyMutation, full ? fullSubmission() : (sampleSubmission(projectId) as Json)),
    );

/** A request body: JSON to serialise, or raw text sent as it is (mostly not JSON at all). */
type Body = { json: Json } | { raw: string };

const submitBody = (): fc.Arbitrary<Body> =>
  fc.oneof(
    { weight: 6, arbitrary: mutatedSubmission().map((json) => ({ json })) },
    { weight: 2, arbitrary: (fc.jsonValue() as fc.Arbitrary<Json>).map((json) => ({ json })) },
    { weight: 1, arbitrary: hostileText.map((raw) => ({ raw })) },
    { weight: 1, arbitrary: deeplyNestedText().map((raw) => ({ raw })) },
  );

async function post(path: string, body: Body | null): Promise<Response> {
  if (body === null) return manager.request(path, { method: "POST" });
  if ("json" in body) return manager.request(path, { method: "POST", json: body.json });
  return manager.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: body.raw,
  });
}

/** Percent-encodes every UTF-8 byte; encodeURIComponent throws on lone surrogates. */
function percentEncodeBytes(text: string): string {
  return [...new TextEncoder().encode(text)].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");
}

const queryPart = (text: string, encoding: "bytes" | "raw" | "stray-percent") =>
  encoding === "bytes" ? percentEncodeBytes(text) : encoding === "raw" ? text : `${text}%${text}%E2%82`;

const listQuery: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom("state", "states", "limit", "offset", "workerPool"), hostileText),
      fc.oneof(
        fc.constantFrom(
          ...JOB_STATES,
          ...WORKER_POOLS,
          "0",
          "1",
          "50",
          "100",
          "101",
          "-1",
          "1e2",
          "0x10",
          " 7",
          "",
        ),
        fc
          .array(fc.constantFrom(...JOB_STATES, "", " QUEUED", "queued"), { maxLength: 6 })
          .map((states) => states.join(",")),
        fc.integer().map(String),
        hostileText,
      ),
      fc.constantFrom("bytes" as const, "raw" as const, "stray-percent" as const),
    ),
    { maxLength: 8 },
  )
  .map((entries) =>
    entries
      .map(([key, value, encoding]) => `${queryPart(key, encoding)}=${queryPart(value, encoding)}`)
      .join("&"),
  );

// ---- properties --------------------------------------------------------------------------

/** The answer is one of the route's documented ones; a 400 is the full validation envelope. */
async function expectDocumentedAnswer(response: Response, allowed: number[]): Promise<unknown> {
  const text = await response.text();
  expect(allowed, `${response.status} ${text}`).toContain(response.status);
  const body = JSON.parse(text);
  if (response.status === 400) {
    expect(body).toStrictEqual({
      statusCode: 400,
      error: "Bad Request",
      message: "Validation failed",
      code: "validation.failed",
      requestId: response.headers.get("x-request-id"),
      details: expect.any(Array),
    });
    expect(body.details.length).toBeGreaterThan(0);
    for (const detail of body.details) {
      expect(detail).toStrictEqual({
        path: expect.any(String),
        message: expect.any(String),
        code: expect.stringMatching(/^[a-z]+(\.[a-z_]+)+$/),
      });
    }
  }
  return body;
}

/** Every job has exactly attempt 1 and one job.created announcement, and none is a stranger. */
async function expectNoPartialJob(): Promise<void> {
  const jobs = await manager.sql<
    { id: string; attempts: number; firstAttempts: number; announcements: number }[]
  >`
    select j.id,
           (select count(*) from attempts a where a.job_id = j.id)::int as attempts,
           (select count(*) from attempts a
             where a.job_id = j.id and a.attempt_number = 1 and a.id = j.current_attempt_id)::int as first_attempts,
           (select count(*) from outbox o
             where o.kind = 'job.created' and o.payload->>'jobId' = j.id::text)::int as announcements
    from jobs j`;
  for (const job of jobs) {
    expect(job, job.id).toEqual({ id: job.id, attempts: 1, firstAttempts: 1, announcements: 1 });
  }
  expect(new Set(jobs.map((job) => job.id))).toEqual(new Set([...seededJobIds, ...fuzzedJobIds]));
  const [orphans] = await manager.sql<{ count: number }[]>`
    select count(*)::int as count from outbox o
    where o.kind = 'job.created' and not exists (select 1 from jobs j where j.id::text = o.payload->>'jobId')`;
  expect(orphans?.count).toBe(0);
}

describe("fuzzing the job routes", () => {
  it(
    "submit answers 201 or a 400 envelope to any body, storing whole jobs only",
    async () => {
      await fc.assert(
        fc.asyncProperty(submitBody(), async (body) => {
          const response = await post(JOBS, body);
          const answer = await expectDocumentedAnswer(response, [201, 400]);
          if (response.status === 201) fuzzedJobIds.add((answer as { id: string }).id);
        }),
        { numRuns: RUNS },
      );
      await expectNoPartialJob();
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "cancel and retry answer 202, 400, 404 or 409 to any id and body",
    async () => {
      const jobId = fc.oneof(
        fc.constantFrom(...seededJobIds),
        fc.uuid(),
        hostileText,
        fc.constantFrom(
          "",
          "%2F",
          "00000000-0000-0000-0000-000000000000",
          "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
        ),
      );
      const body = fc.option(
        fc.oneof(
          (fc.jsonValue() as fc.Arbitrary<Json>).map((json): Body => ({ json })),
          hostileText.map((raw): Body => ({ raw })),
        ),
      );
      await fc.assert(
        fc.asyncProperty(jobId, fc.constantFrom("cancel", "retry"), body, async (id, action, payload) => {
          // Ids that escape their path segment reach other routes, and those may answer 404.
          const response = await post(`${JOBS}/${percentEncodeBytes(id)}/${action}`, payload);
          await expectDocumentedAnswer(response, [202, 400, 404, 409]);
        }),
        { numRuns: RUNS },
      );
      await expectNoPartialJob();
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "list answers 200 with a page of distinct jobs, or a 400 envelope, to any query string",
    async () => {
      await fc.assert(
        fc.asyncProperty(listQuery, async (query) => {
          const response = await manager.request(`${JOBS}?${query}`);
          const answer = await expectDocumentedAnswer(response, [200, 400]);
          if (response.status !== 200) return;
          const page = answer as { items: { id: string }[]; limit: number; offset: number; total: number };
          expect(page.limit).toBeGreaterThanOrEqual(1);
          expect(page.limit).toBeLessThanOrEqual(100);
          expect(page.items.length).toBeLessThanOrEqual(page.limit);
          const ids = page.items.map((item) => item.id);
          expect(new Set(ids).size, `${query} listed a job twice`).toBe(ids.length);
        }),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe("cases fuzzing found, pinned", () => {
  const loneSurrogate = "\ud800";
  it.each<[string, Path]>([
    ["executionPlan.input.uri", ["executionPlan", "input", "uri"]],
    ["executionPlan.outputs.0.destinationUri", ["executionPlan", "outputs", 0, "destinationUri"]],
    ["executionPlan.manifestUri", ["executionPlan", "manifestUri"]],
    ["executionPlan.workspace.rootDirectory", ["executionPlan", "workspace", "rootDirectory"]],
    ["executionPlan.transforms.subtitles.0.uri", ["executionPlan", "transforms", "subtitles", 0, "uri"]],
    ["executionPlan.transforms.watermark.uri", ["executionPlan", "transforms", "watermark", "uri"]],
  ])("a lone UTF-16 surrogate in %s answers 400 at that path", async (dotted, path) => {
    const body = fullSubmission();
    withValueAt(body, path, `${valueAt(body, path)}${loneSurrogate}`);
    const response = await submit(body);
    expect(await response.json()).toStrictEqual({
      statusCode: 400,
      error: "Bad Request",
      message: "Validation failed",
      code: "validation.failed",
      requestId: response.headers.get("x-request-id"),
      details: [{ path: dotted, message: expect.any(String), code: expect.stringMatching(/^validation\./) }],
    });
  });

  it("naming a state twice lists each job once", async () => {
    await submit(sampleSubmission(projectId) as Json);
    const listed = async (query: string) => {
      const response = await manager.request(`${JOBS}?${query}&limit=100`);
      expect(response.status).toBe(200);
      return ((await response.json()) as { items: { id: string }[] }).items.map((item) => item.id);
    };
    const once = await listed("state=QUEUED");
    expect(once.length).toBeGreaterThan(0);
    expect(await listed("states=QUEUED,QUEUED")).toEqual(once);
  });
});
