/** Real-looking execution plans for tests and benchmarks. */
export function samplePlan(overrides: Record<string, unknown> = {}) {
  return {
    input: { uri: "s3://media-in/movies/42/source.mov" },
    outputs: [
      {
        id: "720p",
        kind: "FILE",
        container: "mp4",
        destinationUri: "s3://media-out/movies/42/720p.mp4",
        video: { codec: "h264", height: 720, preset: "medium" },
        audio: { codec: "aac", bitrateKbps: 128 },
      },
    ],
    ...overrides,
  };
}

export function sampleSubmission(projectId: string, overrides: Record<string, unknown> = {}) {
  return { projectId, executionPlan: samplePlan(), ...overrides };
}
