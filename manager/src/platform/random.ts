/** Secrets and nonces: `byteCount` random bytes as base64url without padding (URL- and header-safe). */
export function randomBase64url(byteCount: number): string {
  let binary = "";
  for (const byte of crypto.getRandomValues(new Uint8Array(byteCount))) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
