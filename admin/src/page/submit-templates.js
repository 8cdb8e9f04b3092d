/**
 * What fills the submit form: its templates (a choice of the form's first select) and the
 * fields of an output added by hand.
 */

/**
 * An output's fields as the form shows them.
 * @typedef {object} OutputTemplate
 * @property {string} id
 * @property {string} container
 * @property {string} destinationUri
 * @property {{ codec: string, height?: number | undefined, preset: string }} [video]
 * @property {{ codec: string, bitrateKbps: number }} [audio]
 */

/**
 * @typedef {object} PlanTemplate
 * @property {import("./i18n.js").MessageKey} label
 * @property {string} inputUri
 * @property {string} manifestUri
 * @property {string} removedSegments
 * @property {OutputTemplate[]} outputs
 */

/**
 * The templates by the name the form's select gives them.
 * @type {Record<string, PlanTemplate>}
 */
export const TEMPLATES = {
  demo: {
    label: "submit.templateDemo",
    inputUri: "s3://media-in/demo/clip.mp4",
    manifestUri: "s3://media-out/demo/manifest.json",
    removedSegments: "5000-8000",
    outputs: [
      {
        id: "360p",
        container: "mp4",
        destinationUri: "s3://media-out/demo/360p.mp4",
        video: { codec: "h264", height: 360, preset: "fastest" },
        audio: { codec: "aac", bitrateKbps: 128 },
      },
      {
        id: "240p",
        container: "webm",
        destinationUri: "s3://media-out/demo/240p.webm",
        video: { codec: "vp9", height: 240, preset: "fastest" },
        audio: { codec: "opus", bitrateKbps: 96 },
      },
    ],
  },
  ladder: {
    label: "submit.templateLadder",
    inputUri: "s3://media-in/source.mp4",
    manifestUri: "s3://media-out/ladder/manifest.json",
    removedSegments: "",
    outputs: [1080, 720, 480].map((height) => ({
      id: `${height}p`,
      container: "mp4",
      destinationUri: `s3://media-out/ladder/${height}p.mp4`,
      video: { codec: "h264", height, preset: "medium" },
      audio: { codec: "aac", bitrateKbps: 128 },
    })),
  },
  audio: {
    label: "submit.templateAudio",
    inputUri: "s3://media-in/source.mp4",
    manifestUri: "",
    removedSegments: "",
    outputs: [
      {
        id: "audio",
        container: "mp4",
        destinationUri: "s3://media-out/audio/audio.m4a",
        audio: { codec: "aac", bitrateKbps: 128 },
      },
    ],
  },
};

/**
 * The fields of an output added to the form.
 * @type {OutputTemplate}
 */
export const EMPTY_OUTPUT = {
  id: "",
  container: "mp4",
  destinationUri: "",
  video: { codec: "h264", height: undefined, preset: "medium" },
  audio: { codec: "aac", bitrateKbps: 128 },
};
