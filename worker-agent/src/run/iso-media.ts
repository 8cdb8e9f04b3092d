/**
 * What an MP4 or MOV output holds, read from its `moov` box in this process instead of from
 * ffprobe: the pure reader (describeMovie) and the thin file read (describeIsoMediaFile).
 *
 * Why: ffprobe links some 200 shared libraries and spends 120–200 ms of CPU starting (most of
 * it in the dynamic loader), and the description is awaited before `completed` is reported,
 * beside the output's upload. The reader answers only for what TJM's own outputs hold (ffmpeg's
 * mov muxer, the plan's codecs) and gives up, returning undefined, on anything else: a
 * fragmented or rotated file, a chapter track, a sample entry it does not name. The caller
 * then asks ffprobe, so an answer from here is always the one ffprobe would give
 * (iso-media.real.test.ts compares the two on real outputs).
 */
import { open } from "node:fs/promises";

/** What the completion report says of an output, as media-info.ts's MediaInfo would give it. */
export interface MovieDescription {
  /** mvhd's duration, which is ffprobe's format duration for a file ffmpeg wrote. */
  durationMs: number;
  /** The first video track's, then every audio track's, then every subtitle track's codec. */
  codecs: string[];
  widthPx?: number;
  heightPx?: number;
}

interface Box {
  type: string;
  /** The box's content, after its header. */
  body: DataView;
}

/**
 * The header of the box at `offset` in `view`, which holds `remaining` bytes from there to the
 * end of its container (a file's size, or the parent's content): its type, header length and
 * whole size (0 meaning "to the end"); undefined when the header is cut off or the box overruns.
 */
function boxHeader(
  view: DataView,
  offset: number,
  remaining: number,
): { type: string; headerBytes: number; size: number } | undefined {
  if (remaining < 8 || view.byteLength - offset < 8) return undefined;
  let size = view.getUint32(offset);
  let headerBytes = 8;
  if (size === 1) {
    if (remaining < 16 || view.byteLength - offset < 16) return undefined;
    size = Number(view.getBigUint64(offset + 8));
    headerBytes = 16;
  } else if (size === 0) {
    size = remaining;
  }
  if (size < headerBytes || size > remaining) return undefined;
  return { type: fourcc(view, offset + 4), headerBytes, size };
}

/** The boxes laid out one after another in `view`; undefined when one overruns it. */
function boxesIn(view: DataView): Box[] | undefined {
  const boxes: Box[] = [];
  let offset = 0;
  while (offset < view.byteLength) {
    const header = boxHeader(view, offset, view.byteLength - offset);
    if (!header) return undefined;
    boxes.push({
      type: header.type,
      body: new DataView(
        view.buffer,
        view.byteOffset + offset + header.headerBytes,
        header.size - header.headerBytes,
      ),
    });
    offset += header.size;
  }
  return boxes;
}

function fourcc(view: DataView, offset: number): string {
  return String.fromCharCode(
    view.getUint8(offset),
    view.getUint8(offset + 1),
    view.getUint8(offset + 2),
    view.getUint8(offset + 3),
  );
}

function child(boxes: Box[] | undefined, type: string): Box | undefined {
  return boxes?.find((box) => box.type === type);
}

function children(box: Box | undefined): Box[] | undefined {
  return box ? boxesIn(box.body) : undefined;
}

/** mvhd: the movie's duration in ms, or undefined when unknown (0 or all ones). */
function movieDurationMs(mvhd: Box): number | undefined {
  const { body } = mvhd;
  const version = body.getUint8(0);
  const [timescale, duration] =
    version === 1
      ? body.byteLength >= 32
        ? [body.getUint32(20), Number(body.getBigUint64(24))]
        : [0, 0]
      : body.byteLength >= 20
        ? [body.getUint32(12), body.getUint32(16)]
        : [0, 0];
  if (timescale === 0 || duration === 0 || duration === 0xffff_ffff) return undefined;
  return Math.round((duration * 1000) / timescale);
}

const IDENTITY_MATRIX = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000];

/** tkhd: whether the track is shown as stored (ffprobe reports a rotation otherwise). */
function unrotated(tkhd: Box): boolean {
  const { body } = tkhd;
  const matrixAt = body.getUint8(0) === 1 ? 4 + 32 + 16 : 4 + 20 + 16;
  if (body.byteLength < matrixAt + 36) return false;
  return IDENTITY_MATRIX.every((value, index) => body.getInt32(matrixAt + index * 4) === value);
}

/** hdlr's handler type: "vide", "soun", "sbtl" / "text" / "subt", "tmcd"… */
function handlerType(hdlr: Box): string | undefined {
  return hdlr.body.byteLength >= 12 ? fourcc(hdlr.body, 8) : undefined;
}

/** The first sample entry of stsd. */
function sampleEntry(stbl: Box[] | undefined): Box | undefined {
  const stsd = child(stbl, "stsd");
  if (!stsd || stsd.body.byteLength < 8 || stsd.body.getUint32(4) === 0) return undefined;
  return boxesIn(new DataView(stsd.body.buffer, stsd.body.byteOffset + 8, stsd.body.byteLength - 8))?.[0];
}

const VIDEO_CODECS: Readonly<Record<string, string>> = {
  avc1: "h264",
  avc3: "h264",
  hvc1: "hevc",
  hev1: "hevc",
  av01: "av1",
  vp09: "vp9",
};

/** VisualSampleEntry: 8 bytes of SampleEntry, 16 reserved, then width and height as stored. */
function videoTrack(entry: Box): { codec: string; width: number; height: number } | undefined {
  const codec = VIDEO_CODECS[entry.type];
  if (!codec || entry.body.byteLength < 28) return undefined;
  const width = entry.body.getUint16(24);
  const height = entry.body.getUint16(26);
  return width > 0 && height > 0 ? { codec, width, height } : undefined;
}

/** AudioSampleEntry's fixed part, by its QuickTime sound description version. */
const AUDIO_ENTRY_BYTES: Readonly<Record<number, number>> = { 0: 28, 1: 44, 2: 64 };

/** The objectTypeIndication of MPEG-4 audio ffprobe names "aac", and those it names "mp3". */
const AAC_OBJECT_TYPES = new Set([0x40, 0x66, 0x67, 0x68]);
const MP3_OBJECT_TYPES = new Set([0x69, 0x6b]);

function audioCodec(entry: Box): string | undefined {
  if (entry.type === "Opus") return "opus";
  if (entry.type === ".mp3") return "mp3";
  if (entry.type !== "mp4a" || entry.body.byteLength < 10) return undefined;
  const fixed = AUDIO_ENTRY_BYTES[entry.body.getUint16(8)];
  if (fixed === undefined || entry.body.byteLength < fixed) return undefined;
  const inner = boxesIn(
    new DataView(entry.body.buffer, entry.body.byteOffset + fixed, entry.body.byteLength - fixed),
  );
  // MP4 puts esds in the entry; MOV (version 1) inside a `wave` box beside `frma`.
  const esds = child(inner, "esds") ?? child(children(child(inner, "wave")), "esds");
  const objectType = esds ? objectTypeIndication(esds.body) : undefined;
  if (objectType === undefined) return undefined;
  if (AAC_OBJECT_TYPES.has(objectType)) return "aac";
  if (MP3_OBJECT_TYPES.has(objectType)) return "mp3";
  return undefined;
}

/** esds (ISO 14496-1): ES_Descriptor (tag 3) → DecoderConfigDescriptor (tag 4) → its first byte. */
function objectTypeIndication(esds: DataView): number | undefined {
  let offset = 4;
  const descriptor = (tag: number): boolean => {
    if (offset >= esds.byteLength || esds.getUint8(offset) !== tag) return false;
    offset++;
    // The length: up to four bytes, seven bits each, the top bit saying another follows.
    for (let index = 0; index < 4 && offset < esds.byteLength; index++) {
      if ((esds.getUint8(offset++) & 0x80) === 0) return true;
    }
    return false;
  };
  if (!descriptor(0x03) || offset + 3 > esds.byteLength) return undefined;
  const flags = esds.getUint8(offset + 2);
  offset += 3;
  if (flags & 0x80) offset += 2;
  if (flags & 0x40) offset += 1 + (offset < esds.byteLength ? esds.getUint8(offset) : 0);
  if (flags & 0x20) offset += 2;
  if (!descriptor(0x04) || offset >= esds.byteLength) return undefined;
  return esds.getUint8(offset);
}

const SUBTITLE_HANDLERS = new Set(["sbtl", "text", "subt"]);
/** 3GPP timed text (MP4) and QuickTime text (MOV): both are ffprobe's mov_text. */
const MOV_TEXT_ENTRIES = new Set(["tx3g", "text"]);

/**
 * The description of a `moov` box's content, or undefined when any part of it is beyond what
 * this reader names (then ffprobe is asked).
 */
export function describeMovie(moov: DataView): MovieDescription | undefined {
  const boxes = boxesIn(moov);
  const mvhd = child(boxes, "mvhd");
  // Fragments carry samples mvhd does not count.
  if (!boxes || !mvhd || child(boxes, "mvex")) return undefined;
  const durationMs = movieDurationMs(mvhd);
  if (durationMs === undefined) return undefined;
  let video: { codec: string; width: number; height: number } | undefined;
  const audio: string[] = [];
  const subtitles: string[] = [];
  for (const trak of boxes.filter((box) => box.type === "trak")) {
    const parts = children(trak);
    // A chapter track ffprobe does not list as a stream: leave such files to it.
    if (child(children(child(parts, "tref")), "chap")) return undefined;
    const tkhd = child(parts, "tkhd");
    const mdia = children(child(parts, "mdia"));
    const hdlr = child(mdia, "hdlr");
    const entry = sampleEntry(children(child(children(child(mdia, "minf")), "stbl")));
    if (!tkhd || !hdlr || !entry) return undefined;
    const handler = handlerType(hdlr);
    if (handler === "vide") {
      const track = videoTrack(entry);
      if (!track || !unrotated(tkhd)) return undefined;
      video ??= track;
    } else if (handler === "soun") {
      const codec = audioCodec(entry);
      if (!codec) return undefined;
      audio.push(codec);
    } else if (handler !== undefined && SUBTITLE_HANDLERS.has(handler)) {
      if (!MOV_TEXT_ENTRIES.has(entry.type)) return undefined;
      subtitles.push("mov_text");
    } else {
      return undefined;
    }
  }
  if (!video && audio.length === 0) return undefined;
  return {
    durationMs,
    codecs: [...(video ? [video.codec] : []), ...audio, ...subtitles],
    ...(video ? { widthPx: video.width, heightPx: video.height } : {}),
  };
}

/** A moov larger than this (hours of samples in its tables) is left to ffprobe. */
const MOOV_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Finds the file's top-level `moov` (after `ftyp` with faststart, after `mdat` without) and
 * describes it; undefined when the file is not one this reader can describe.
 */
export async function describeIsoMediaFile(path: string): Promise<MovieDescription | undefined> {
  const file = await open(path, "r");
  try {
    const { size } = await file.stat();
    const view = new DataView(new ArrayBuffer(16));
    let offset = 0;
    while (offset + 8 <= size) {
      const { bytesRead } = await file.read(new Uint8Array(view.buffer), 0, 16, offset);
      const header = boxHeader(new DataView(view.buffer, 0, bytesRead), 0, size - offset);
      if (!header) return undefined;
      if (header.type === "moov") {
        const length = header.size - header.headerBytes;
        if (length > MOOV_MAX_BYTES) return undefined;
        const moov = new Uint8Array(length);
        const read = await file.read(moov, 0, length, offset + header.headerBytes);
        if (read.bytesRead < length) return undefined;
        return describeMovie(new DataView(moov.buffer));
      }
      offset += header.size;
    }
    return undefined;
  } finally {
    await file.close();
  }
}
