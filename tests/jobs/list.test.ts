import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compactJobCounts } from "../../manager/src/jobs/store.ts";
import { TestManager } from "../harness/manager.ts";

let manager: TestManager;
const ids: Record<string, string[]> = { QUEUED: [], FAILED: [], CANCELLED: [], nvidia: [] };

async function submit(projectId: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const response = await manager.request("/api/v1/operations/jobs", {
    method: "POST",
    json: sampleSubmission(projectId, overrides),
  });
  return ((await response.json()) as { id: string }).id;
}

async function list(query: string) {
  const response = await manager.request(`/api/v1/operations/jobs${query}`);
  return {
    status: response.status,
    body: await response.json(),
    requestId: response.headers.get("x-request-id"),
  };
}

beforeAll(async () => {
  manager = await TestManager.start();
  const { projectId } = await manager.createProject();
  // Submitted one by one so createdAt orders them; newest is last in each list.
  for (let i = 0; i < 6; i++) ids.QUEUED?.push(await submit(projectId));
  for (let i = 0; i < 3; i++) {
    const id = await submit(projectId);
    await manager.forceJobState(id, "FAILED", "FAILED");
    ids.FAILED?.push(id);
  }
  for (let i = 0; i < 2; i++) {
    const id = await submit(projectId);
    await manager.request(`/api/v1/operations/jobs/${id}/cancel`, { method: "POST" });
    ids.CANCELLED?.push(id);
  }
  for (let i = 0; i < 2; i++)
    ids.nvidia?.push(await submit(projectId, { requirements: { requiredCapabilities: ["h264_nvenc"] } }));
});
afterAll(() => manager?.close());

const newestFirst = (list: string[] | undefined) => [...(list ?? [])].reverse();

describe("GET /api/v1/operations/jobs", () => {
  it("lists every job newest first with the default page", async () => {
    const { status, body } = await list("");
    expect(status).toBe(200);
    expect(body).toMatchObject({ total: 13, limit: 50, offset: 0 });
    expect(body.items).toHaveLength(13);
    expect(body.items[0].id).toBe(ids.nvidia?.[1]);
    const created = body.items.map((item: { createdAt: string }) => item.createdAt);
    expect(created).toEqual([...created].sort().reverse());
  });

  it("filters by one state", async () => {
    const { body } = await list("?state=FAILED");
    expect(body.total).toBe(3);
    expect(body.items.map((item: { id: string }) => item.id)).toEqual(newestFirst(ids.FAILED));
  });

  it.each(["?states=FAILED,CANCELLED", "?states=FAILED&states=CANCELLED", "?states=FAILED, CANCELLED"])(
    "filters by several states given as %s",
    async (query) => {
      const { body } = await list(query);
      expect(body.total).toBe(5);
      expect(body.items.map((item: { id: string }) => item.id)).toEqual(
        newestFirst([...(ids.FAILED ?? []), ...(ids.CANCELLED ?? [])]),
      );
    },
  );

  it("filters by worker pool, alone and with a state", async () => {
    expect((await list("?workerPool=nvidia")).body.total).toBe(2);
    const { body } = await list("?workerPool=nvidia&state=QUEUED");
    expect(body.items.map((item: { id: string }) => item.id)).toEqual(newestFirst(ids.nvidia));
    expect((await list("?workerPool=cpu&state=QUEUED")).body.total).toBe(6);
    expect((await list("?workerPool=amd")).body).toMatchObject({ total: 0, items: [] });
  });

  it("pages with limit and offset, the total unchanged", async () => {
    const all = (await list("?state=QUEUED&limit=100")).body.items.map((item: { id: string }) => item.id);
    const first = await list("?state=QUEUED&limit=4");
    const second = await list("?state=QUEUED&limit=4&offset=4");
    expect(first.body).toMatchObject({ total: 8, limit: 4, offset: 0 });
    expect(second.body).toMatchObject({ total: 8, limit: 4, offset: 4 });
    expect([...first.body.items, ...second.body.items].map((item: { id: string }) => item.id)).toEqual(all);
    expect((await list("?offset=100000")).body).toMatchObject({ items: [], total: 13 });
  });

  it("keeps the total exact before and after count compaction", async () => {
    const before = (await list("?states=QUEUED,FAILED")).body.total;
    await compactJobCounts(manager.sql);
    expect((await list("?states=QUEUED,FAILED")).body.total).toBe(before);
    const [{ n }] = (await manager.sql`select count(*)::int as n from job_state_count_deltas`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(0);
  });

  it.each([
    ["?limit=0", "limit", "must be at least 1", "validation.too_small"],
    ["?limit=101", "limit", "must be at most 100", "validation.too_big"],
    ["?limit=ten", "limit", "must be a whole number", "validation.invalid_format"],
    ["?offset=100001", "offset", "must be at most 100000", "validation.too_big"],
    ["?offset=-1", "offset", "must be a whole number", "validation.invalid_format"],
  ])("refuses %s at path %s", async (query, path, message, code) => {
    const { status, body, requestId } = await list(query);
    expect(status).toBe(400);
    expect(body).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: "Validation failed",
      code: "validation.failed",
      requestId,
      details: [{ path, message, code }],
    });
  });

  it("refuses state and states together", async () => {
    const { status, body } = await list("?state=QUEUED&states=FAILED");
    expect(status).toBe(400);
    expect(body.details).toEqual([
      { path: "states", message: "state and states cannot be used together", code: "validation.custom" },
    ]);
  });

  it("refuses unknown states and pools, naming each", async () => {
    const { status, body } = await list("?states=QUEUED,DONE&workerPool=tpu");
    expect(status).toBe(400);
    expect(body.details.map((detail: { path: string }) => detail.path).sort()).toEqual([
      "states.1",
      "workerPool",
    ]);
  });
});
