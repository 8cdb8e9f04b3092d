/**
 * The rules of what a person may say about themselves in the profile (docs/profile.md). Pure:
 * the route checks a change with them before the accounts aggregate stores it.
 */
import { LOCALES, type Locale } from "@tjm/platform/locale";
import { DISPLAY_NAME_REFUSALS, displayNameRefusal } from "../display-names.ts";

export const NAME_MAX_CHARACTERS = 100;
export const GENDER_DESCRIPTION_MAX_CHARACTERS = 50;
/** The earliest date of birth taken: older ones are typing mistakes, not people. */
export const EARLIEST_DATE_OF_BIRTH = "1900-01-01";

/**
 * An open list: `self-described` carries the person's own words (genderDescription), so no
 * one is left out by the list; `prefer-not-to-say` is an answer, not the absence of one (null).
 */
export const GENDERS = ["female", "male", "non-binary", "prefer-not-to-say", "self-described"] as const;
export type Gender = (typeof GENDERS)[number];

/** The catalogue's locales, and `prs` (ISO 639-3 Dari), stored as the fa-AF it names. */
export const PROFILE_LOCALE_TAGS = [...LOCALES, "prs"] as const;

/** A change as the request states it: absent leaves a field, null clears it. */
export interface ProfileChangeRequest {
  name?: string | undefined;
  dateOfBirth?: string | null | undefined;
  gender?: string | null | undefined;
  genderDescription?: string | null | undefined;
  locale?: string | null | undefined;
}

/** A checked change: only the fields the request named, normalised. */
export interface ProfileChange {
  displayName?: string;
  dateOfBirth?: string | null;
  gender?: Gender | null;
  genderDescription?: string | null;
  locale?: Locale | null;
}

export interface ProfileProblem {
  path: string;
  message: string;
  code:
    | "validation.too_small"
    | "validation.too_big"
    | "validation.invalid_value"
    | "validation.custom"
    | "name.invisible"
    | "name.bidi_override";
}

// C0 and C1 controls, DEL included. Format characters are judged by the name rules
// (display-names.ts): Persian and Pashto names need the zero-width non-joiner.
const CONTROL = /\p{Cc}/u;

/** NFC, trimmed; its length in code points, as people count characters. */
function cleanText(value: string): { text: string; length: number } {
  const text = value.normalize("NFC").trim();
  return { text, length: [...text].length };
}

function textProblem(path: string, value: string, max: number): ProfileProblem | string {
  const { text, length } = cleanText(value);
  if (CONTROL.test(text))
    return { path, message: "must not contain control characters", code: "validation.custom" };
  if (length < 1) return { path, message: "must not be empty", code: "validation.too_small" };
  if (length > max) return { path, message: `must be at most ${max} characters`, code: "validation.too_big" };
  return text;
}

/** Whether a YYYY-MM-DD string names a real Gregorian date. */
function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * Checks a requested change against the stored gender (a description needs self-described, in
 * the request or already stored); `today` is the UTC date (YYYY-MM-DD) a date of birth may not
 * pass. Every problem is listed, as a 400 lists them.
 */
export function checkProfileChange(
  request: ProfileChangeRequest,
  storedGender: Gender | null,
  today: string,
): { change: ProfileChange; problems: ProfileProblem[] } {
  const change: ProfileChange = {};
  const problems: ProfileProblem[] = [];
  if (request.name !== undefined) {
    const checked = textProblem("name", request.name, NAME_MAX_CHARACTERS);
    const refusal = typeof checked === "string" ? displayNameRefusal(checked) : undefined;
    if (typeof checked !== "string") problems.push(checked);
    else if (refusal !== undefined) problems.push({ path: "name", ...DISPLAY_NAME_REFUSALS[refusal] });
    else change.displayName = checked;
  }
  if (request.dateOfBirth !== undefined) {
    const value = request.dateOfBirth;
    if (value === null) change.dateOfBirth = null;
    else if (!isCalendarDate(value))
      problems.push({
        path: "dateOfBirth",
        message: "must be a date as YYYY-MM-DD",
        code: "validation.custom",
      });
    else if (value < EARLIEST_DATE_OF_BIRTH)
      problems.push({
        path: "dateOfBirth",
        message: `must be on or after ${EARLIEST_DATE_OF_BIRTH}`,
        code: "validation.too_small",
      });
    else if (value > today)
      problems.push({
        path: "dateOfBirth",
        message: "must not be in the future",
        code: "validation.too_big",
      });
    else change.dateOfBirth = value;
  }
  if (request.gender !== undefined) {
    if (request.gender === null) change.gender = null;
    else if ((GENDERS as readonly string[]).includes(request.gender))
      change.gender = request.gender as Gender;
    else
      problems.push({
        path: "gender",
        message: `must be one of ${GENDERS.join(", ")}`,
        code: "validation.invalid_value",
      });
  }
  const gender = change.gender === undefined ? storedGender : change.gender;
  const description = request.genderDescription;
  const required: ProfileProblem = {
    path: "genderDescription",
    message: "is required with gender self-described",
    code: "validation.custom",
  };
  if (gender === "self-described") {
    if (typeof description === "string") {
      const checked = textProblem("genderDescription", description, GENDER_DESCRIPTION_MAX_CHARACTERS);
      if (typeof checked === "string") change.genderDescription = checked;
      else problems.push(checked);
    } else if (description === null || storedGender !== "self-described") problems.push(required);
  } else if (typeof description === "string") {
    problems.push({
      path: "genderDescription",
      message: "is only taken with gender self-described",
      code: "validation.custom",
    });
  } else if (description === null || change.gender !== undefined) {
    // Another answer replaces the person's own words.
    change.genderDescription = null;
  }
  if (request.locale !== undefined) {
    if (request.locale === null) change.locale = null;
    else if ((PROFILE_LOCALE_TAGS as readonly string[]).includes(request.locale))
      change.locale = request.locale === "prs" ? "fa-AF" : (request.locale as Locale);
    else
      problems.push({
        path: "locale",
        message: `must be one of ${PROFILE_LOCALE_TAGS.join(", ")}`,
        code: "validation.invalid_value",
      });
  }
  return { change, problems };
}
