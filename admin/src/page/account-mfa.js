/**
 * The account page's two-step sign-in section: the factors (remove one), enrolling an
 * authenticator app (QR code and key, then a first code), SMS or e-mail codes (a code sent, then
 * typed in), and the recovery codes, shown once (the first factor's, or new ones) with a
 * print-only sheet. account.js hands over its section helpers, so a stale sign-in here leads
 * through "Sign in again" as in every other section.
 */
import { deleteJson, getJson, postJson } from "./api.js";
import { el, formatTime, setStatus } from "./dom.js";
import { t } from "./i18n.js";

const MFA_PATH = "/api/me/security/mfa";

let helpers;
/** The enrolment waiting for its code: its type and id. */
let pending;

const revokeOthers = () => document.getElementById("mfa-revoke").checked;

function factorRow(factor) {
  const name = t("account.mfa.type", { type: factor.type });
  return el(
    "tr",
    { "data-factor-id": factor.id, "data-factor-type": factor.type },
    el("td", { text: name }),
    el("td", { dir: "ltr", text: factor.maskedDestination ?? t("common.none") }),
    el("td", { text: formatTime(factor.createdAt) }),
    el("td", { text: formatTime(factor.lastUsedAt) }),
    el(
      "td",
      {},
      el("button", {
        type: "button",
        class: "secondary",
        "aria-label": t("account.mfa.removeLabel", { name }),
        text: t("account.mfa.remove"),
        onclick: (event) => removeFactor(event.currentTarget, factor),
      }),
    ),
  );
}

async function loadFactors() {
  try {
    const [{ factors }, { mfa }] = await Promise.all([getJson(MFA_PATH), getJson("/api/me")]);
    const rows =
      factors.length === 0
        ? [el("tr", {}, el("td", { colspan: 5, text: t("account.mfa.none") }))]
        : factors.map(factorRow);
    document.querySelector("#mfa-table tbody").replaceChildren(...rows);
    document.getElementById("mfa-remaining").textContent = mfa.enabled
      ? t("account.mfa.remaining", { count: mfa.recoveryCodesRemaining })
      : "";
    document.getElementById("mfa-regenerate").hidden = !mfa.enabled;
  } catch (error) {
    helpers.reportFailure("mfa", "account.notLoaded", error);
  }
}

/** Hides the code step and the TOTP part, the key and QR code gone; the enrolment, if any, is abandoned. */
function closeEnrolment() {
  pending = undefined;
  document.getElementById("mfa-totp").hidden = true;
  document.getElementById("mfa-secret").textContent = "";
  document.getElementById("mfa-qr").removeAttribute("src");
  const form = document.getElementById("mfa-code-form");
  form.hidden = true;
  form.reset();
  helpers.clearDetails(form);
}

/** The recovery codes, this once, on the page and on the sheet `print` shows alone. */
function showRecoveryCodes(codes) {
  const items = () => codes.map((code) => el("li", { text: code }));
  document.getElementById("mfa-recovery-list").replaceChildren(...items());
  document.querySelector("#mfa-print-sheet ol").replaceChildren(...items());
  document.getElementById("mfa-recovery").hidden = false;
  setStatus("mfa-status", t("account.mfa.recoveryShown"));
  document.getElementById("mfa-saved").focus();
}

function hideRecoveryCodes() {
  document.getElementById("mfa-recovery").hidden = true;
  document.getElementById("mfa-recovery-list").replaceChildren();
  document.querySelector("#mfa-print-sheet ol").replaceChildren();
  setStatus("mfa-status", "");
  document.getElementById("mfa-heading").focus();
}

function startEnrolment(button) {
  const type = button.dataset.mfaStart;
  void helpers.act("mfa", button, t("account.mfa.starting"), async () => {
    try {
      closeEnrolment();
      const started = await postJson(`${MFA_PATH}/${type}`);
      pending = { type, enrolmentId: started.enrolmentId };
      if (type === "totp") {
        document.getElementById("mfa-qr").src = started.qrCode;
        document.getElementById("mfa-secret").textContent = started.secret;
        document.getElementById("mfa-totp").hidden = false;
      }
      document.getElementById("mfa-code-intro").textContent =
        type === "totp"
          ? t("account.mfa.enterAppCode", { expires: formatTime(started.expiresAt) })
          : t("account.mfa.codeSent", {
              destination: started.maskedDestination,
              expires: formatTime(started.expiresAt),
            });
      document.getElementById("mfa-code-form").hidden = false;
      setStatus("mfa-status", "");
      document.getElementById("mfa-code").focus();
    } catch (error) {
      helpers.reportFailure("mfa", "account.mfa.notStarted", error);
    }
  });
}

function verifyEnrolment(form) {
  helpers.clearDetails(form);
  const code = form.elements.code.value.trim();
  if (code === "") {
    setStatus("mfa-status", t("account.mfa.enterCode"));
    form.elements.code.focus();
    return;
  }
  const button = form.querySelector('button[type="submit"]');
  void helpers.act("mfa", button, t("account.mfa.verifying"), async () => {
    try {
      const enrolled = await postJson(`${MFA_PATH}/${pending.type}/verification`, {
        enrolmentId: pending.enrolmentId,
        code,
        revoke_other_sessions: revokeOthers(),
      });
      closeEnrolment();
      await loadFactors();
      setStatus("mfa-status", t("account.mfa.added", { type: enrolled.factor.type }));
      if (enrolled.recoveryCodes !== null) showRecoveryCodes(enrolled.recoveryCodes);
      else document.getElementById("mfa-heading").focus();
    } catch (error) {
      helpers.reportFailure("mfa", "account.mfa.notVerified", error, form);
    }
  });
}

function removeFactor(button, factor) {
  if (!window.confirm(t("account.mfa.removeQuestion", { type: factor.type }))) return;
  const query = revokeOthers() ? "?revoke_other_sessions=true" : "";
  void helpers.act("mfa", button, t("account.mfa.removing"), async () => {
    try {
      await deleteJson(`${MFA_PATH}/${encodeURIComponent(factor.id)}${query}`);
      await loadFactors();
      setStatus("mfa-status", t("account.mfa.removed", { type: factor.type }));
      document.getElementById("mfa-heading").focus();
    } catch (error) {
      helpers.reportFailure("mfa", "account.mfa.notRemoved", error);
    }
  });
}

function regenerate(button) {
  if (!window.confirm(t("account.mfa.regenerateQuestion"))) return;
  void helpers.act("mfa", button, t("account.mfa.regenerating"), async () => {
    try {
      const { recoveryCodes } = await postJson(`${MFA_PATH}/recovery-codes/regeneration`);
      await loadFactors();
      showRecoveryCodes(recoveryCodes);
    } catch (error) {
      helpers.reportFailure("mfa", "account.mfa.notRegenerated", error);
    }
  });
}

/** `sectionHelpers`: account.js's act, reportFailure and clearDetails. */
export function startMfa(sectionHelpers) {
  helpers = sectionHelpers;
  for (const button of document.querySelectorAll("[data-mfa-start]")) {
    button.addEventListener("click", () => startEnrolment(button));
  }
  const form = document.getElementById("mfa-code-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    verifyEnrolment(form);
  });
  document.getElementById("mfa-cancel").addEventListener("click", () => {
    closeEnrolment();
    document.getElementById("mfa-heading").focus();
  });
  const regenerateButton = document.getElementById("mfa-regenerate");
  regenerateButton.addEventListener("click", () => regenerate(regenerateButton));
  const sheet = document.getElementById("mfa-print-sheet");
  document.getElementById("mfa-print").addEventListener("click", () => {
    // The sheet is the one thing printed (style.css), only while this print lasts.
    sheet.classList.add("printing");
    window.addEventListener("afterprint", () => sheet.classList.remove("printing"), { once: true });
    window.print();
  });
  document.getElementById("mfa-saved").addEventListener("click", hideRecoveryCodes);
  return loadFactors();
}
