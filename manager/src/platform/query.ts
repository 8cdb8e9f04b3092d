import { z } from "@hono/zod-openapi";

/** A whole number in a query string, bounded, with a default when absent. */
export const integerParam = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .transform((value) => value ?? fallback);

/** The offset pagination every list route shares: limit 1..100 (50), offset 0..100000 (0). */
export const pageQuery = {
  limit: integerParam(1, 100, 50).openapi({
    param: { name: "limit", in: "query" },
    description: "1..100, default 50",
    type: "integer",
    example: 50,
  }),
  offset: integerParam(0, 100_000, 0).openapi({
    param: { name: "offset", in: "query" },
    description: "0..100000, default 0",
    type: "integer",
    example: 0,
  }),
};

/** The answer of a list route: a page of `item` and the total matching the filters. */
export function pageOf<Item extends z.ZodType>(name: string, item: Item, totalDescription: string) {
  return z
    .object({
      items: z.array(item),
      total: z.number().int().openapi({ description: totalDescription, example: 1 }),
      limit: z.number().int().openapi({ example: 50 }),
      offset: z.number().int().openapi({ example: 0 }),
    })
    .openapi(name);
}

/** "true" or "false" in a query string. */
export const booleanParam = () =>
  z
    .enum(["true", "false"], { error: "must be true or false" })
    .transform((value) => value === "true")
    .optional();
