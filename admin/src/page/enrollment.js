/**
 * Issues an enrollment token and shows it once, with a copy button. It lives only in this
 * page's memory (the answer carries `Cache-Control: no-store`); a reload shows it no more.
 */
import { errorDetails, errorMessage, postJson } from "./api.js";
import { byId, control, detailItems, formatTime, setStatus, submitButton } from "./dom.js";
import { errorsId, ids } from "./element-ids.js";
import { t } from "./i18n.js";

/** @typedef {import("@tjm/sdk").components["schemas"]["EnrollmentToken"]} EnrollmentToken */

export function start() {
  const form = byId(ids.enrollmentForm, HTMLFormElement);
  const label = control(form, "label", HTMLInputElement);
  const pool = control(form, "pool", HTMLSelectElement);
  const issued = byId(ids.issuedToken, HTMLElement);
  const value = byId(ids.tokenValue, HTMLInputElement);
  const labelErrors = byId(errorsId(ids.tokenLabel), HTMLUListElement);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    labelErrors.replaceChildren();
    label.removeAttribute("aria-invalid");
    const labelText = label.value.trim();
    const button = submitButton(form);
    button.disabled = true;
    setStatus(ids.viewStatus, t("enrollment.issuing"));
    try {
      /** @type {EnrollmentToken} */
      const token = await postJson("/api/operations/enrollment-tokens", {
        ...(labelText === "" ? {} : { label: labelText }),
        ...(pool.value === "" ? {} : { pool: pool.value }),
      });
      value.value = token.token;
      byId(ids.tokenDetails, HTMLElement).textContent = t("enrollment.details", {
        expires: formatTime(token.expiresAt),
        pool: token.pool ?? t("enrollment.anyPool"),
        label: token.label ?? t("enrollment.noLabel"),
      });
      setStatus(ids.copyResult, "");
      setStatus(ids.viewStatus, t("enrollment.issued"));
      issued.hidden = false;
      value.focus();
      value.select();
    } catch (error) {
      const details = errorDetails(error);
      if (details.length > 0) {
        label.setAttribute("aria-invalid", "true");
        labelErrors.replaceChildren(...detailItems(details));
      }
      setStatus(ids.viewStatus, t("enrollment.notIssued", { error: errorMessage(error) }));
    } finally {
      button.disabled = false;
    }
  });

  byId(ids.copyToken, HTMLButtonElement).addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(value.value);
      setStatus(ids.copyResult, t("enrollment.copied"));
    } catch {
      value.select();
      setStatus(ids.copyResult, t("enrollment.copyRefused"));
    }
  });
}
