/**
 * The account page's profile section: the avatar (uploaded, removed) and the profile's fields,
 * saved as the change from the profile last shown.
 */
import { patchJson, postFile } from "./api.js";
import { byId, control, setStatus, submitButton } from "./dom.js";
import { ids, sections, statusId } from "./element-ids.js";
import { t } from "./i18n.js";
import { act, clearDetails } from "./sections.js";

/** @typedef {import("@tjm/sdk").components["schemas"]["AccountSnapshot"]} AccountSnapshot */
/** @typedef {import("./sections.js").ReportFailure} ReportFailure */

const SECTION = sections.profile;

/**
 * The profile form's controls.
 * @param {HTMLFormElement} form
 */
function profileFields(form) {
  return {
    name: control(form, "name", HTMLInputElement),
    dateOfBirth: control(form, "dateOfBirth", HTMLInputElement),
    gender: control(form, "gender", HTMLSelectElement),
    genderDescription: control(form, "genderDescription", HTMLInputElement),
    locale: control(form, "locale", HTMLSelectElement),
  };
}

/** @param {HTMLInputElement | HTMLSelectElement} field */
function entered(field) {
  const text = field.value.trim();
  return text === "" ? null : text;
}

export class ProfileSection {
  #form = byId(ids.profileForm, HTMLFormElement);
  #fields = profileFields(this.#form);
  #failed;
  #shown;
  /**
   * The profile as last shown; a save sends what differs from it.
   * @type {AccountSnapshot | undefined}
   */
  #snapshot;

  /**
   * @param {ReportFailure} failed
   * @param {(snapshot: AccountSnapshot) => void} shown called with each profile shown
   * @param {() => void} avatarChanged
   */
  constructor(failed, shown, avatarChanged) {
    this.#failed = failed;
    this.#shown = shown;
    this.#fields.gender.addEventListener("change", () => this.#showDescriptionField());
    this.#form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#save();
    });
    this.#startAvatar(avatarChanged);
  }

  /** @param {AccountSnapshot} snapshot */
  show(snapshot) {
    this.#snapshot = snapshot;
    const image = byId(ids.avatarImage, HTMLImageElement);
    if (snapshot.avatarUrl !== null) image.src = snapshot.avatarUrl;
    image.hidden = snapshot.avatarUrl === null;
    byId(ids.noAvatar, HTMLElement).hidden = snapshot.avatarUrl !== null;
    byId(ids.removeAvatar, HTMLButtonElement).hidden = snapshot.avatarUrl === null;
    const fields = this.#fields;
    fields.name.value = snapshot.name;
    fields.dateOfBirth.value = snapshot.dateOfBirth ?? "";
    fields.gender.value = snapshot.gender ?? "";
    fields.genderDescription.value = snapshot.genderDescription ?? "";
    fields.locale.value = snapshot.locale ?? "";
    this.#showDescriptionField();
    this.#shown(snapshot);
  }

  #showDescriptionField() {
    byId(ids.genderDescriptionField, HTMLElement).hidden = this.#fields.gender.value !== "self-described";
  }

  /** The fields that differ from the snapshot: an unchanged profile sends an empty change. */
  #change() {
    const fields = this.#fields;
    const snapshot = this.#snapshot;
    if (snapshot === undefined) throw new Error("no profile was shown to change");
    const values = {
      name: fields.name.value.trim(),
      dateOfBirth: entered(fields.dateOfBirth),
      gender: entered(fields.gender),
      locale: entered(fields.locale),
    };
    /** @type {Record<string, string | null>} */
    const change = Object.fromEntries(
      Object.entries(values).filter(
        ([name, value]) => value !== snapshot[/** @type {keyof typeof values} */ (name)],
      ),
    );
    const description = entered(fields.genderDescription);
    if (
      values.gender === "self-described" &&
      (description !== snapshot.genderDescription || "gender" in change)
    ) {
      change.genderDescription = description;
    }
    return change;
  }

  #save() {
    clearDetails(this.#form);
    void act(SECTION, submitButton(this.#form), t("account.profile.saving"), async () => {
      try {
        this.show(await patchJson("/api/me/profile", this.#change()));
        setStatus(statusId(SECTION), t("account.profile.saved"));
      } catch (error) {
        this.#failed(SECTION, "account.profile.notSaved", error, this.#form);
      }
    });
  }

  /** @param {() => void} avatarChanged */
  #startAvatar(avatarChanged) {
    const avatarForm = byId(ids.avatarForm, HTMLFormElement);
    const file = byId(ids.avatarFile, HTMLInputElement);
    avatarForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const chosen = file.files?.[0];
      if (!chosen) {
        setStatus(statusId(SECTION), t("account.profile.chooseFile"));
        file.focus();
        return;
      }
      void act(SECTION, submitButton(avatarForm), t("account.profile.uploading"), async () => {
        try {
          this.show(await postFile("/api/me/profile/avatar", chosen));
          avatarForm.reset();
          setStatus(statusId(SECTION), t("account.profile.uploaded"));
          avatarChanged();
        } catch (error) {
          this.#failed(SECTION, "account.profile.notUploaded", error);
        }
      });
    });
    const remove = byId(ids.removeAvatar, HTMLButtonElement);
    remove.addEventListener("click", () => {
      void act(SECTION, remove, t("account.profile.saving"), async () => {
        try {
          this.show(await patchJson("/api/me/profile", { avatarUploadId: null }));
          setStatus(statusId(SECTION), t("account.profile.removed"));
          file.focus();
        } catch (error) {
          this.#failed(SECTION, "account.profile.notUploaded", error);
        }
      });
    });
  }
}
