/** The one-second job the dispatch and tiny-jobs scenarios run many of. */
import { join } from "node:path";
import type { BenchContext } from "../scenario.ts";
import { type Cluster, INPUT_BUCKET, makeClip, OUTPUT_BUCKET, scratchDirectory } from "./cluster.ts";

export const TINY_CLIP = { seconds: 1, size: "256x144", rate: 25 } as const;
export const TINY_KEY = "tiny/source.mp4";

/** A one-second job: H.264 144p at the "fastest" preset and AAC, one MP4 output. */
export function tinyPlan(run: string): Record<string, unknown> {
  return {
    input: { uri: `s3://${INPUT_BUCKET}/${TINY_KEY}` },
    outputs: [
      {
        id: "tiny",
        kind: "FILE",
        container: "mp4",
        destinationUri: `s3://${OUTPUT_BUCKET}/tiny/${run}/tiny.mp4`,
        video: { codec: "h264", height: 144, preset: "fastest" },
        audio: { codec: "aac", bitrateKbps: 64 },
      },
    ],
  };
}

/** Puts the one-second clip at TINY_KEY; resolves with its local copy. */
export async function uploadTinyClip(
  context: BenchContext,
  cluster: Cluster,
  label: string,
): Promise<string> {
  const scratch = await scratchDirectory(context, `${label}-files`);
  const path = join(scratch, "tiny.mp4");
  await makeClip(path, TINY_CLIP);
  await cluster.s3.put(INPUT_BUCKET, TINY_KEY, path);
  return path;
}
