/** The bundled list of common passwords (common-passwords.txt: source and license in its header). */
import { readFile } from "node:fs/promises";

const LIST_URL = new URL("./common-passwords.txt", import.meta.url);

/**
 * The entries of a list file: every line after the header, which ends at the first empty line
 * (a `#` cannot mark comments: "#name?" is one of the passwords).
 */
export function parseCommonPasswords(text: string): ReadonlySet<string> {
  const headerEnd = text.indexOf("\n\n");
  if (headerEnd < 0) throw new Error("a common-password list needs a header ended by an empty line");
  return new Set(
    text
      .slice(headerEnd + 2)
      .split("\n")
      .filter((line) => line !== ""),
  );
}

/** Read once at start-up and handed to the password policy. */
export async function readCommonPasswords(): Promise<ReadonlySet<string>> {
  return parseCommonPasswords(await readFile(LIST_URL, "utf8"));
}
