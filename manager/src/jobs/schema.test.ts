/**
 * The API's ExecutionPlanTemplate is the protocol's ExecutionPlan widened by aliases and
 * defaults: what a template parses to is, in type and in value, the plan a lease carries.
 */
import type { z } from "@hono/zod-openapi";
import { type ExecutionPlan, ExecutionPlanSchema } from "@tjm/protocol";
import { describe, expect, expectTypeOf, it } from "vitest";
import { ExecutionPlanTemplateSchema } from "./schema.ts";

const INPUT = { uri: "s3://media-in/movies/42/source.mov" };

interface Case {
  name: string;
  template: Record<string, unknown>;
  normalised: ExecutionPlan;
}

const noTransforms = { removedSegments: [], subtitles: [], audioTracks: [] };

const cases: Case[] = [
  {
    name: "a rendition with every default left out",
    template: {
      input: INPUT,
      outputs: [
        {
          id: "720p",
          kind: "FILE",
          container: "mp4",
          destinationUri: "s3://media-out/movies/42/720p.mp4",
          video: { codec: "h264" },
          audio: { codec: "aac" },
        },
      ],
    },
    normalised: {
      input: INPUT,
      outputs: [
        {
          id: "720p",
          kind: "FILE",
          container: "mp4",
          destinationUri: "s3://media-out/movies/42/720p.mp4",
          video: { codec: "h264", preset: "medium" },
          audio: { codec: "aac", bitrateKbps: 128 },
        },
      ],
      transforms: noTransforms,
    },
  },
  {
    name: "legacy encoder names and x264 and NVENC preset words",
    template: {
      input: INPUT,
      outputs: (
        [
          ["libx264", "ultrafast"],
          ["h264_nvenc", "p3"],
          ["h264_qsv", "placebo"],
        ] as const
      ).map(([codec, preset], index) => ({
        id: `o${index}`,
        kind: "FILE",
        container: "mkv",
        destinationUri: `s3://media-out/movies/42/o${index}.mkv`,
        video: { codec, height: 480, preset },
      })),
    },
    normalised: {
      input: INPUT,
      outputs: (["fastest", "fast", "slowest"] as const).map((preset, index) => ({
        id: `o${index}`,
        kind: "FILE" as const,
        container: "mkv" as const,
        destinationUri: `s3://media-out/movies/42/o${index}.mkv`,
        video: { codec: "h264" as const, height: 480, preset },
      })),
      transforms: noTransforms,
    },
  },
  {
    name: "every transform, the watermark's defaults left out, a workspace and a manifest",
    template: {
      input: INPUT,
      outputs: [
        {
          id: "main",
          kind: "FILE",
          container: "webm",
          destinationUri: "s3://media-out/movies/42/main.webm",
          video: { codec: "vp9", height: 1080, preset: "slow" },
          audio: { codec: "opus", bitrateKbps: 160 },
        },
      ],
      transforms: {
        removedSegments: [{ startMs: 0, endMs: 15000 }],
        subtitles: [
          { uri: "s3://media-in/movies/42/en.srt", language: "en", mode: "SOFT" },
          { uri: "s3://media-in/movies/42/pt-BR.srt", language: "pt-BR", mode: "BURN_IN" },
        ],
        audioTracks: [{ streamIndex: 1, language: "en" }, { streamIndex: 0 }],
        watermark: { uri: "s3://media-in/brand/logo.png", widthPercent: 10 },
      },
      workspace: { rootDirectory: "/var/lib/tjm/work" },
      manifestUri: "s3://media-out/movies/42/manifest.json",
    },
    normalised: {
      input: INPUT,
      outputs: [
        {
          id: "main",
          kind: "FILE",
          container: "webm",
          destinationUri: "s3://media-out/movies/42/main.webm",
          video: { codec: "vp9", height: 1080, preset: "slow" },
          audio: { codec: "opus", bitrateKbps: 160 },
        },
      ],
      transforms: {
        removedSegments: [{ startMs: 0, endMs: 15000 }],
        subtitles: [
          { uri: "s3://media-in/movies/42/en.srt", language: "en", mode: "SOFT" },
          { uri: "s3://media-in/movies/42/pt-BR.srt", language: "pt-BR", mode: "BURN_IN" },
        ],
        audioTracks: [{ streamIndex: 1, language: "en" }, { streamIndex: 0 }],
        watermark: {
          uri: "s3://media-in/brand/logo.png",
          position: "bottom-right",
          marginPx: 16,
          opacity: 1,
          widthPercent: 10,
        },
      },
      workspace: { rootDirectory: "/var/lib/tjm/work" },
      manifestUri: "s3://media-out/movies/42/manifest.json",
    },
  },
  {
    name: "an audio-only extract with only some transform lists given",
    template: {
      input: INPUT,
      outputs: [
        {
          id: "mp3",
          kind: "FILE",
          container: "mpegts",
          destinationUri: "s3://media-out/movies/42/audio.ts",
          audio: { codec: "mp3", bitrateKbps: 320 },
        },
      ],
      transforms: { audioTracks: [{ streamIndex: 2 }] },
    },
    normalised: {
      input: INPUT,
      outputs: [
        {
          id: "mp3",
          kind: "FILE",
          container: "mpegts",
          destinationUri: "s3://media-out/movies/42/audio.ts",
          audio: { codec: "mp3", bitrateKbps: 320 },
        },
      ],
      transforms: { removedSegments: [], subtitles: [], audioTracks: [{ streamIndex: 2 }] },
    },
  },
];

describe("the template parses to the protocol's ExecutionPlan", () => {
  it("in type: a field changed on either side is a compile error here", () => {
    expectTypeOf<z.output<typeof ExecutionPlanTemplateSchema>>().toEqualTypeOf<ExecutionPlan>();
  });

  it.each(cases)("in value: $name", ({ template, normalised }) => {
    const stored = ExecutionPlanTemplateSchema.parse(template);
    expect(stored).toEqual(normalised);
    expect(ExecutionPlanSchema.parse(stored)).toEqual(stored);
  });

  it.each(cases)("a stored plan submitted again is stored as it is: $name", ({ normalised }) => {
    expect(ExecutionPlanTemplateSchema.parse(normalised)).toEqual(normalised);
  });
});
