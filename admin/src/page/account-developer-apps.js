/**
 * The account page's developer apps: the account's own OAuth applications through the console's
 * /api/me/developer-apps (the console holds the token). List, create, edit, rotate the secret
 * with a grace period, delete. A secret is shown once, right after it is made. Rotating and
 * deleting need a recent sign-in: the section then offers to sign in again.
 */
import { deleteJson, errorMessage, getJson, postJson, putJson } from "./api.js";
import { el, formatTime, setStatus } from "./dom.js";
import { t } from "./i18n.js";
import { act, clearDetails, reportFailure } from "./sections.js";

const SECTION = "developer-apps";
const APPS = "/api/me/developer-apps";

const appPath = (app) => `${APPS}/${encodeURIComponent(app.id)}`;

/** The app being edited; undefined while the form creates one. */
let editing;

function failed(messageKey, error, form, values = {}) {
  reportFailure(SECTION, error, form, {
    failed: t(messageKey, { ...values, error: errorMessage(error) }),
    reauthNeeded: t("account.reauth.needed"),
    returnTo: `/account#${SECTION}`,
  });
}

/** A secret shown once, with the app it belongs to. */
function showSecret(name, secret) {
  const shown = document.getElementById("developer-app-secret");
  document.getElementById("developer-app-secret-heading").textContent = t(
    "account.developerApps.secretHeading",
    { name },
  );
  document.getElementById("developer-app-secret-value").value = secret;
  shown.hidden = false;
  document.getElementById("developer-app-secret-value").focus();
}

function appItem(app) {
  const kind = t("account.developerApps.kind", { type: app.type, application: app.applicationType });
  return el(
    "li",
    { "data-client-id": app.clientId },
    el("strong", { dir: "auto", text: app.name }),
    el("span", { text: kind }),
    el("span", {}, t("account.developerApps.clientId"), " ", el("code", { dir: "ltr", text: app.clientId })),
    el("span", { dir: "ltr", text: app.redirectUris.join(" ") }),
    app.previousSecretExpiresAt === null
      ? null
      : el("span", {
          text: t("account.developerApps.graceUntil", { until: formatTime(app.previousSecretExpiresAt) }),
        }),
    el(
      "div",
      { class: "buttons" },
      el("button", {
        type: "button",
        class: "secondary",
        "aria-label": t("account.developerApps.editLabel", { name: app.name }),
        text: t("account.developerApps.edit"),
        onclick: () => startEditing(app),
      }),
      app.type === "confidential"
        ? el("button", {
            type: "button",
            class: "secondary",
            "aria-label": t("account.developerApps.rotateLabel", { name: app.name }),
            text: t("account.developerApps.rotate"),
            onclick: (event) => rotate(event.currentTarget, app),
          })
        : null,
      el("button", {
        type: "button",
        class: "danger",
        "aria-label": t("account.developerApps.deleteLabel", { name: app.name }),
        text: t("account.developerApps.delete"),
        onclick: (event) => remove(event.currentTarget, app),
      }),
    ),
  );
}

async function loadApps() {
  try {
    const { apps } = await getJson(APPS);
    document
      .getElementById("developer-apps-list")
      .replaceChildren(
        ...(apps.length === 0 ? [el("li", { text: t("account.developerApps.none") })] : apps.map(appItem)),
      );
  } catch (error) {
    failed("account.notLoaded", error);
  }
}

/** The form's body: the whole app, as PUT replaces it. */
function appBody(form) {
  return {
    name: form.elements.name.value.trim(),
    type: form.elements.type.value,
    applicationType: form.elements.applicationType.value,
    grantTypes: form.elements.refreshTokens.checked
      ? ["authorization_code", "refresh_token"]
      : ["authorization_code"],
    redirectUris: form.elements.redirectUris.value
      .split("\n")
      .map((uri) => uri.trim())
      .filter((uri) => uri !== ""),
  };
}

function stopEditing() {
  const form = document.getElementById("developer-app-form");
  editing = undefined;
  form.reset();
  clearDetails(form);
  form.elements.type.disabled = false;
  document.getElementById("developer-app-form-legend").textContent = t("account.developerApps.create");
  form.querySelector('button[type="submit"]').textContent = t("account.developerApps.create");
  document.getElementById("developer-app-cancel").hidden = true;
}

function startEditing(app) {
  const form = document.getElementById("developer-app-form");
  stopEditing();
  editing = app;
  form.elements.name.value = app.name;
  form.elements.type.value = app.type;
  // Its type stays what it is: the Manager refuses a change.
  form.elements.type.disabled = true;
  form.elements.applicationType.value = app.applicationType;
  form.elements.refreshTokens.checked = app.grantTypes.includes("refresh_token");
  form.elements.redirectUris.value = app.redirectUris.join("\n");
  document.getElementById("developer-app-form-legend").textContent = t("account.developerApps.editing", {
    name: app.name,
  });
  form.querySelector('button[type="submit"]').textContent = t("account.developerApps.save");
  document.getElementById("developer-app-cancel").hidden = false;
  form.elements.name.focus();
}

function rotate(button, app) {
  const grace = document.getElementById("developer-app-grace");
  if (!window.confirm(t("account.developerApps.rotateQuestion", { name: app.name }))) return;
  void act(SECTION, button, t("account.developerApps.rotating"), async () => {
    try {
      const rotated = await postJson(`${appPath(app)}/rotate-secret`, { graceSeconds: Number(grace.value) });
      showSecret(app.name, rotated.clientSecret);
      setStatus(
        `${SECTION}-status`,
        rotated.previousSecretExpiresAt === null
          ? t("account.developerApps.rotatedNow", { name: app.name })
          : t("account.developerApps.rotated", {
              name: app.name,
              until: formatTime(rotated.previousSecretExpiresAt),
            }),
      );
      await loadApps();
    } catch (error) {
      failed("account.developerApps.notRotated", error);
    }
  });
}

function remove(button, app) {
  if (!window.confirm(t("account.developerApps.deleteQuestion", { name: app.name }))) return;
  void act(SECTION, button, t("account.developerApps.deleting"), async () => {
    try {
      await deleteJson(appPath(app));
      if (editing?.id === app.id) stopEditing();
      setStatus(`${SECTION}-status`, t("account.developerApps.deleted", { name: app.name }));
      await loadApps();
      document.getElementById("developer-apps-heading").focus();
    } catch (error) {
      failed("account.developerApps.notDeleted", error);
    }
  });
}

/** Wires the section and loads its list (the promise the page waits for). */
export function startDeveloperApps() {
  const form = document.getElementById("developer-app-form");
  document.getElementById("developer-app-cancel").addEventListener("click", stopEditing);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearDetails(form);
    document.getElementById("developer-app-secret").hidden = true;
    const body = appBody(form);
    const button = form.querySelector('button[type="submit"]');
    const app = editing;
    void act(SECTION, button, t("account.developerApps.saving"), async () => {
      try {
        if (app === undefined) {
          const created = await postJson(APPS, body);
          stopEditing();
          if (created.clientSecret !== null) showSecret(created.name, created.clientSecret);
          setStatus(`${SECTION}-status`, t("account.developerApps.created", { name: created.name }));
          await loadApps();
        } else {
          const saved = await putJson(appPath(app), body);
          stopEditing();
          setStatus(`${SECTION}-status`, t("account.developerApps.saved", { name: saved.name }));
          await loadApps();
        }
      } catch (error) {
        failed("account.developerApps.notSaved", error, form);
      }
    });
  });
  return loadApps();
}
