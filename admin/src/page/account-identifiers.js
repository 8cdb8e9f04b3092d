/**
 * The account page's e-mail and phone: a new one is asked for, then confirmed by the code sent to
 * it (the changes waiting for their code are kept in order, the first one's code step shown) or
 * cancelled.
 */
import { deleteJson, patchJson, postJson } from "./api.js";
import { byId, control, el, formatTime, setStatus, submitButton } from "./dom.js";
import { ids, sections, statusId } from "./element-ids.js";
import { t } from "./i18n.js";
import { act, clearDetails } from "./sections.js";

/** @typedef {import("@tjm/sdk").components["schemas"]} Schemas */
/** @typedef {Schemas["AccountIdentifiers"]} AccountIdentifiers */
/** @typedef {Schemas["PendingIdentifierChange"]} PendingIdentifierChange */
/** @typedef {import("./sections.js").ReportFailure} ReportFailure */

/**
 * The identifiers as a profile or a change answers them; only a change's answer lists the
 * changes waiting for their code.
 * @typedef {Omit<AccountIdentifiers, "pendingChanges"> & { pendingChanges?: PendingIdentifierChange[] }} ShownIdentifiers
 */

const SECTION = sections.identifiers;

export class IdentifiersSection {
  #form = byId(ids.identifiersForm, HTMLFormElement);
  #email = control(this.#form, "email", HTMLInputElement);
  #phone = control(this.#form, "phone", HTMLInputElement);
  #codeForm = byId(ids.codeForm, HTMLFormElement);
  #code = control(this.#codeForm, "code", HTMLInputElement);
  #failed;
  /** @type {PendingIdentifierChange[]} */
  #pending = [];

  /** @param {ReportFailure} failed */
  constructor(failed) {
    this.#failed = failed;
    this.#form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#request();
    });
    this.#codeForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#verify();
    });
    const cancel = byId(ids.cancelChange, HTMLButtonElement);
    cancel.addEventListener("click", () => this.#cancel(cancel));
  }

  /** @param {ShownIdentifiers} identifiers */
  show(identifiers) {
    /**
     * @param {string} identifier
     * @param {boolean} verified
     */
    const value = (identifier, verified) =>
      t("account.identifiers.value", { identifier, verified: String(verified) });
    byId(ids.identifiersSummary, HTMLElement).replaceChildren(
      el("dt", { text: t("account.identifiers.email") }),
      el("dd", { dir: "auto", text: value(identifiers.email, identifiers.emailVerified) }),
      el("dt", { text: t("account.identifiers.phone") }),
      el("dd", {
        dir: "auto",
        text:
          identifiers.phone === null
            ? t("account.identifiers.noPhone")
            : value(identifiers.phone, identifiers.phoneVerified),
      }),
    );
    if (identifiers.pendingChanges !== undefined) this.#showPending(identifiers.pendingChanges);
  }

  /**
   * The code step of the first change waiting for its code; hidden when none waits.
   * @param {PendingIdentifierChange[]} changes
   */
  #showPending(changes) {
    this.#pending = changes;
    const [change] = changes;
    this.#codeForm.hidden = change === undefined;
    if (change === undefined) return;
    byId(ids.codeIntro, HTMLElement).textContent = t("account.identifiers.codeSent", {
      identifier: change.identifier,
      expires: formatTime(change.expiresAt),
    });
    this.#code.value = "";
  }

  #request() {
    clearDetails(this.#form);
    const email = this.#email.value.trim();
    const phone = this.#phone.value.trim();
    if (email === "" && phone === "") {
      setStatus(statusId(SECTION), t("account.identifiers.nameOne"));
      this.#email.focus();
      return;
    }
    void act(SECTION, submitButton(this.#form), t("account.identifiers.requesting"), async () => {
      try {
        const identifiers = await patchJson("/api/me/identifiers", {
          ...(email === "" ? {} : { email }),
          ...(phone === "" ? {} : { phone }),
        });
        this.#form.reset();
        this.show(identifiers);
        const [change] = this.#pending;
        setStatus(
          statusId(SECTION),
          change === undefined ? "" : t("account.identifiers.pending", { identifier: change.identifier }),
        );
        this.#code.focus();
      } catch (error) {
        this.#failed(SECTION, "account.identifiers.notRequested", error, this.#form);
      }
    });
  }

  #verify() {
    clearDetails(this.#codeForm);
    const [change] = this.#pending;
    if (change === undefined) return;
    void act(SECTION, submitButton(this.#codeForm), t("account.identifiers.verifying"), async () => {
      try {
        const identifiers = await postJson("/api/me/identifiers/verifications", {
          changeId: change.id,
          code: this.#code.value.trim(),
        });
        this.show(identifiers);
        setStatus(
          statusId(SECTION),
          t("account.identifiers.changed", { identifier: change.identifier, channel: change.channel }),
        );
        (this.#pending.length > 0 ? this.#code : this.#email).focus();
      } catch (error) {
        this.#failed(SECTION, "account.identifiers.notVerified", error, this.#codeForm);
      }
    });
  }

  /** @param {HTMLButtonElement} cancel */
  #cancel(cancel) {
    const [change, ...rest] = this.#pending;
    if (change === undefined) return;
    void act(SECTION, cancel, t("account.identifiers.cancelling"), async () => {
      try {
        await deleteJson(`/api/me/identifiers/changes/${encodeURIComponent(change.id)}`);
        this.#showPending(rest);
        setStatus(statusId(SECTION), t("account.identifiers.cancelled"));
        this.#email.focus();
      } catch (error) {
        this.#failed(SECTION, "account.identifiers.notCancelled", error);
      }
    });
  }
}
