/**
 * Why an NVENC encoder could not be opened, in a sentence an operator can act on. FFmpeg's own
 * lines name the failing call, not the cause, and four causes look alike to a person reading
 * them: a GPU without an NVENC engine (the A100/H100/H200 compute line decodes on the GPU but
 * cannot encode), a missing driver, a missing encode library, and a full session table.
 * fixtures/nvidia-h200/README.md has the recorded output each rule was written from. No I/O.
 */
import { CONTEXT_LINE } from "./parse.ts";

/** The nvenc wrapper names each GPU it finds at verbose level: "[ GPU #0 - < NVIDIA H200 > has Compute SM 9.0 ]". */
const GPU_LINE = /^\[ GPU #\d+ - < (.+?) > has Compute SM [\d.]+ \]$/;

/** The encoder's own messages in an ffmpeg log, in order. */
export function encoderMessages(stderr: string, encoder: string): string[] {
  return stderr.split("\n").flatMap((line) => {
    const match = CONTEXT_LINE.exec(line.trim());
    return match !== null && match[1] === encoder ? [match[2] ?? ""] : [];
  });
}

/** The GPUs the nvenc wrapper found, by name ("NVIDIA H200"), each once. */
export function nvencGpuNames(messages: readonly string[]): string[] {
  const names = messages.flatMap((message) => {
    const name = GPU_LINE.exec(message)?.[1];
    return name === undefined ? [] : [name];
  });
  return [...new Set(names)];
}

/**
 * What the nvenc wrapper logs on every open, success or not, at verbose level: never a reason.
 * The last of them ("Nvenc unloaded") would otherwise pass for the encoder's last word.
 */
export function isNvencChatter(message: string): boolean {
  return (
    /^Loaded Nvenc version /.test(message) ||
    message === "Nvenc initialized successfully" ||
    /^\d+ CUDA capable devices? found$/.test(message) ||
    GPU_LINE.test(message) ||
    message === "Nvenc unloaded"
  );
}

/** The sentence for an NVENC encoder's failed self-test, or undefined when the cause is none of the four. */
export function nvencFailureReason(stderr: string, encoder: string): string | undefined {
  const messages = encoderMessages(stderr, encoder);
  const gpus = nvencGpuNames(messages);
  const gpu = gpus.length === 0 ? "this host's GPU" : gpus.join(", ");
  const said = (pattern: RegExp) => messages.find((message) => pattern.test(message));

  const noEngine = said(/OpenEncodeSessionEx failed: unsupported device \(2\)/);
  if (noEngine !== undefined) {
    return `${gpu} has no NVENC encoder engine (data-centre GPUs such as the A100, H100 and H200 decode on the GPU but cannot encode): enrol this host in the cpu pool, where it can still decode with hwaccel cuda (ffmpeg: ${noEngine})`;
  }
  const noDriver = said(/^Cannot load libcuda\.so/);
  if (noDriver !== undefined) {
    return `the NVIDIA driver library (libcuda) is missing: install the NVIDIA driver, or run the container with the NVIDIA Container Toolkit (ffmpeg: ${noDriver})`;
  }
  const noEncodeLibrary = said(/^Cannot load libnvidia-encode\.so/);
  if (noEncodeLibrary !== undefined) {
    return `the NVIDIA encode library (libnvidia-encode) is missing although the driver is present: install the driver's encode library, or in a container add "video" to NVIDIA_DRIVER_CAPABILITIES (ffmpeg: ${noEncodeLibrary})`;
  }
  const sessionLimit = said(
    /OpenEncodeSessionEx failed: (incompatible client key \(21\)|out of memory \(10\))/,
  );
  if (sessionLimit !== undefined) {
    return `${gpu} refused another NVENC session: the driver's limit of concurrent encode sessions is reached (other processes hold them); lower WORKER_CAPACITY or stop the other encoders (ffmpeg: ${sessionLimit})`;
  }
  return undefined;
}
