import type { Config } from "../config.ts";

/**
 * How long a signing key stays published after its successor starts signing: the longest
 * lifetime of a token it signed (access and ID tokens share PROVIDER_ACCESS_TOKEN_TTL_SECONDS),
 * plus a minute for clocks that disagree.
 */
export function keyRetentionMs(config: Config): number {
  return (config.PROVIDER_ACCESS_TOKEN_TTL_SECONDS + 60) * 1000;
}
