/**
 * Issues an enrollment token and shows it once, with a copy button. It lives only in this
 * page's memory (the answer carries `Cache-Control: no-store`); a reload shows it no more.
 */
import { ApiError, errorMessage, postJson } from "./api.js";
import { detailItems, formatTime, setStatus } from "./dom.js";
import { t } from "./i18n.js";

export function start() {
  const form = document.getElementById("enrollment-form");
  const issued = document.getElementById("issued-token");
  const value = document.getElementById("token-value");
  const labelErrors = document.getElementById("token-label-errors");

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    labelErrors.replaceChildren();
    form.elements.label.removeAttribute("aria-invalid");
    const label = form.elements.label.value.trim();
    const pool = form.elements.pool.value;
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    setStatus("view-status", t("enrollment.issuing"));
    try {
      const token = await postJson("/api/operations/enrollment-tokens", {
        ...(label === "" ? {} : { label }),
        ...(pool === "" ? {} : { pool }),
      });
      value.value = token.token;
      document.getElementById("token-details").textContent = t("enrollment.details", {
        expires: formatTime(token.expiresAt),
        pool: token.pool ?? t("enrollment.anyPool"),
        label: token.label ?? t("enrollment.noLabel"),
      });
      setStatus("copy-result", "");
      setStatus("view-status", t("enrollment.issued"));
      issued.hidden = false;
      value.focus();
      value.select();
    } catch (error) {
      const details =
        error instanceof ApiError && Array.isArray(error.body?.details) ? error.body.details : [];
      if (details.length > 0) {
        form.elements.label.setAttribute("aria-invalid", "true");
        labelErrors.replaceChildren(...detailItems(details));
      }
      setStatus("view-status", t("enrollment.notIssued", { error: errorMessage(error) }));
    } finally {
      button.disabled = false;
    }
  });

  document.getElementById("copy-token").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(value.value);
      setStatus("copy-result", t("enrollment.copied"));
    } catch {
      value.select();
      setStatus("copy-result", t("enrollment.copyRefused"));
    }
  });
}
