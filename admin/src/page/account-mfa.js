/**
 * The account page's two-step sign-in section: the factors (remove one), enrolling an
 * authenticator app (QR code and key, then a first code), SMS or e-mail codes (a code sent, then
 * typed in), and the recovery codes, shown once (the first factor's, or new ones) with a
 * print-only sheet. A stale sign-in here leads through "Sign in again" as in every other section
 * of the page (account.js hands over its report of a section's failure).
 */
import { deleteJson, getJson, postJson } from "./api.js";
import { byId, control, el, find, formatTime, setStatus, submitButton, tableBody } from "./dom.js";
import { headingId, ids, sections, statusId } from "./element-ids.js";
import { t } from "./i18n.js";
import { act, clearDetails } from "./sections.js";

/** @typedef {import("@tjm/sdk").components["schemas"]} Schemas */
/** @typedef {Schemas["MfaFactor"]} MfaFactor */
/** @typedef {Schemas["MfaFactorList"]} MfaFactorList */
/** @typedef {Schemas["AccountSnapshot"]} AccountSnapshot */
/** @typedef {Schemas["MfaFactorEnrolled"]} MfaFactorEnrolled */
/** @typedef {Schemas["MfaRecoveryCodes"]} MfaRecoveryCodes */
/** @typedef {Schemas["MfaTotpEnrolment"]} MfaTotpEnrolment */
/** @typedef {Schemas["MfaSmsEnrolment"] | Schemas["MfaEmailEnrolment"]} MfaCodeEnrolment */
/** @typedef {MfaFactor["type"]} FactorType */
/** @typedef {import("./sections.js").ReportFailure} ReportFailure */

const MFA_PATH = "/api/me/security/mfa";
const SECTION = sections.mfa;

/** @type {FactorType[]} */
const FACTOR_TYPES = ["totp", "sms", "email"];

const focusHeading = () => byId(headingId(SECTION), HTMLElement).focus();

const revokeOthers = () => byId(ids.mfaRevoke, HTMLInputElement).checked;

/**
 * @param {MfaFactor} factor
 * @param {(button: HTMLButtonElement) => void} remove
 */
function factorRow(factor, remove) {
  const name = t("account.mfa.type", { type: factor.type });
  const button = el("button", {
    type: "button",
    class: "secondary",
    "aria-label": t("account.mfa.removeLabel", { name }),
    text: t("account.mfa.remove"),
  });
  button.addEventListener("click", () => remove(button));
  return el(
    "tr",
    { "data-factor-id": factor.id, "data-factor-type": factor.type },
    el("td", { text: name }),
    el("td", { dir: "ltr", text: factor.maskedDestination ?? t("common.none") }),
    el("td", { text: formatTime(factor.createdAt) }),
    el("td", { text: formatTime(factor.lastUsedAt) }),
    el("td", {}, button),
  );
}

/**
 * An authenticator app's enrolment: its QR code and key.
 * @param {MfaTotpEnrolment} enrolment
 */
function showAppKey(enrolment) {
  byId(ids.mfaQr, HTMLImageElement).src = enrolment.qrCode;
  byId(ids.mfaSecret, HTMLElement).textContent = enrolment.secret;
  byId(ids.mfaTotp, HTMLElement).hidden = false;
}

/**
 * Where an SMS or e-mail enrolment's code was sent.
 * @param {MfaCodeEnrolment} enrolment
 */
const codeSent = (enrolment) =>
  t("account.mfa.codeSent", {
    destination: enrolment.maskedDestination,
    expires: formatTime(enrolment.expiresAt),
  });

/**
 * The recovery codes, this once, on the page and on the sheet `print` shows alone.
 * @param {string[]} codes
 */
function showRecoveryCodes(codes) {
  const items = () => codes.map((code) => el("li", { text: code }));
  byId(ids.mfaRecoveryList, HTMLElement).replaceChildren(...items());
  find(byId(ids.mfaPrintSheet, HTMLElement), "ol", HTMLOListElement).replaceChildren(...items());
  byId(ids.mfaRecovery, HTMLElement).hidden = false;
  setStatus(statusId(SECTION), t("account.mfa.recoveryShown"));
  byId(ids.mfaSaved, HTMLButtonElement).focus();
}

function hideRecoveryCodes() {
  byId(ids.mfaRecovery, HTMLElement).hidden = true;
  byId(ids.mfaRecoveryList, HTMLElement).replaceChildren();
  find(byId(ids.mfaPrintSheet, HTMLElement), "ol", HTMLOListElement).replaceChildren();
  setStatus(statusId(SECTION), "");
  focusHeading();
}

/** Prints the recovery codes' sheet, the one thing printed (style.css) only while this print lasts. */
function printRecoveryCodes() {
  const sheet = byId(ids.mfaPrintSheet, HTMLElement);
  sheet.classList.add("printing");
  window.addEventListener("afterprint", () => sheet.classList.remove("printing"), { once: true });
  window.print();
}

class MfaSection {
  #failed;
  #codeForm = byId(ids.mfaCodeForm, HTMLFormElement);
  /**
   * The enrolment waiting for its code.
   * @type {{ type: FactorType, enrolmentId: string } | undefined}
   */
  #pending;

  /** @param {ReportFailure} failed */
  constructor(failed) {
    this.#failed = failed;
    for (const button of document.querySelectorAll("[data-mfa-start]")) {
      if (!(button instanceof HTMLButtonElement)) continue;
      const type = FACTOR_TYPES.find((candidate) => candidate === button.dataset.mfaStart);
      if (type !== undefined) button.addEventListener("click", () => this.#startEnrolment(button, type));
    }
    this.#codeForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#verifyEnrolment();
    });
    byId(ids.mfaCancel, HTMLButtonElement).addEventListener("click", () => {
      this.#closeEnrolment();
      focusHeading();
    });
    const regenerate = byId(ids.mfaRegenerate, HTMLButtonElement);
    regenerate.addEventListener("click", () => this.#regenerate(regenerate));
    byId(ids.mfaPrint, HTMLButtonElement).addEventListener("click", printRecoveryCodes);
    byId(ids.mfaSaved, HTMLButtonElement).addEventListener("click", hideRecoveryCodes);
  }

  async loadFactors() {
    try {
      /** @type {[MfaFactorList, AccountSnapshot]} */
      const [{ factors }, { mfa }] = await Promise.all([getJson(MFA_PATH), getJson("/api/me")]);
      const rows =
        factors.length === 0
          ? [el("tr", {}, el("td", { colspan: 5, text: t("account.mfa.none") }))]
          : factors.map((factor) => factorRow(factor, (button) => this.#removeFactor(button, factor)));
      tableBody(ids.mfaTable).replaceChildren(...rows);
      byId(ids.mfaRemaining, HTMLElement).textContent = mfa.enabled
        ? t("account.mfa.remaining", { count: mfa.recoveryCodesRemaining })
        : "";
      byId(ids.mfaRegenerate, HTMLButtonElement).hidden = !mfa.enabled;
    } catch (error) {
      this.#failed(SECTION, "account.notLoaded", error);
    }
  }

  /** Hides the code step and the TOTP part, the key and QR code gone; the enrolment, if any, is abandoned. */
  #closeEnrolment() {
    this.#pending = undefined;
    byId(ids.mfaTotp, HTMLElement).hidden = true;
    byId(ids.mfaSecret, HTMLElement).textContent = "";
    byId(ids.mfaQr, HTMLImageElement).removeAttribute("src");
    this.#codeForm.hidden = true;
    this.#codeForm.reset();
    clearDetails(this.#codeForm);
  }

  /**
   * @param {HTMLButtonElement} button
   * @param {FactorType} type
   */
  #startEnrolment(button, type) {
    void act(SECTION, button, t("account.mfa.starting"), async () => {
      try {
        this.#closeEnrolment();
        // The answer's schema is the type's: an app's enrolment has its key, the others a destination.
        const started = await postJson(`${MFA_PATH}/${type}`);
        this.#pending = { type, enrolmentId: started.enrolmentId };
        if (type === "totp") showAppKey(started);
        byId(ids.mfaCodeIntro, HTMLElement).textContent =
          type === "totp"
            ? t("account.mfa.enterAppCode", { expires: formatTime(started.expiresAt) })
            : codeSent(started);
        this.#codeForm.hidden = false;
        setStatus(statusId(SECTION), "");
        byId(ids.mfaCode, HTMLInputElement).focus();
      } catch (error) {
        this.#failed(SECTION, "account.mfa.notStarted", error);
      }
    });
  }

  #verifyEnrolment() {
    const form = this.#codeForm;
    clearDetails(form);
    const field = control(form, "code", HTMLInputElement);
    const code = field.value.trim();
    if (code === "") {
      setStatus(statusId(SECTION), t("account.mfa.enterCode"));
      field.focus();
      return;
    }
    const pending = this.#pending;
    if (pending === undefined) return;
    void act(SECTION, submitButton(form), t("account.mfa.verifying"), async () => {
      try {
        /** @type {MfaFactorEnrolled} */
        const enrolled = await postJson(`${MFA_PATH}/${pending.type}/verification`, {
          enrolmentId: pending.enrolmentId,
          code,
          revoke_other_sessions: revokeOthers(),
        });
        this.#closeEnrolment();
        await this.loadFactors();
        setStatus(statusId(SECTION), t("account.mfa.added", { type: enrolled.factor.type }));
        if (enrolled.recoveryCodes !== null) showRecoveryCodes(enrolled.recoveryCodes);
        else focusHeading();
      } catch (error) {
        this.#failed(SECTION, "account.mfa.notVerified", error, form);
      }
    });
  }

  /**
   * @param {HTMLButtonElement} button
   * @param {MfaFactor} factor
   */
  #removeFactor(button, factor) {
    if (!window.confirm(t("account.mfa.removeQuestion", { type: factor.type }))) return;
    const query = revokeOthers() ? "?revoke_other_sessions=true" : "";
    void act(SECTION, button, t("account.mfa.removing"), async () => {
      try {
        await deleteJson(`${MFA_PATH}/${encodeURIComponent(factor.id)}${query}`);
        await this.loadFactors();
        setStatus(statusId(SECTION), t("account.mfa.removed", { type: factor.type }));
        focusHeading();
      } catch (error) {
        this.#failed(SECTION, "account.mfa.notRemoved", error);
      }
    });
  }

  /** @param {HTMLButtonElement} button */
  #regenerate(button) {
    if (!window.confirm(t("account.mfa.regenerateQuestion"))) return;
    void act(SECTION, button, t("account.mfa.regenerating"), async () => {
      try {
        /** @type {MfaRecoveryCodes} */
        const { recoveryCodes } = await postJson(`${MFA_PATH}/recovery-codes/regeneration`);
        await this.loadFactors();
        showRecoveryCodes(recoveryCodes);
      } catch (error) {
        this.#failed(SECTION, "account.mfa.notRegenerated", error);
      }
    });
  }
}

/**
 * Wires the section and loads its factors (the promise the page waits for).
 * @param {ReportFailure} failed
 */
export function startMfa(failed) {
  return new MfaSection(failed).loadFactors();
}
