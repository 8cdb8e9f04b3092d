/**
 * The account page's developer apps: the account's own OAuth applications through the console's
 * /api/me/developer-apps (the console holds the token). List, create, edit, rotate the secret
 * with a grace period, delete. A secret is shown once, right after it is made. Rotating and
 * deleting need a recent sign-in: the section then offers to sign in again.
 */
import { deleteJson, getJson, postJson, putJson } from "./api.js";
import { byId, control, el, formatTime, setStatus, submitButton } from "./dom.js";
import { headingId, ids, sections, statusId } from "./element-ids.js";
import { t } from "./i18n.js";
import { act, clearDetails } from "./sections.js";

/** @typedef {import("@tjm/sdk").components["schemas"]} Schemas */
/** @typedef {Schemas["DeveloperApp"]} DeveloperApp */
/** @typedef {Schemas["DeveloperAppList"]} DeveloperAppList */
/** @typedef {Schemas["RotatedSecret"]} RotatedSecret */
/** @typedef {import("./sections.js").ReportFailure} ReportFailure */

const SECTION = sections.developerApps;
const APPS = "/api/me/developer-apps";

/** @param {DeveloperApp} app */
const appPath = (app) => `${APPS}/${encodeURIComponent(app.id)}`;

/**
 * A secret shown once, with the app it belongs to.
 * @param {string} name
 * @param {string} secret
 */
function showSecret(name, secret) {
  byId(ids.developerAppSecretHeading, HTMLElement).textContent = t("account.developerApps.secretHeading", {
    name,
  });
  const value = byId(ids.developerAppSecretValue, HTMLInputElement);
  value.value = secret;
  byId(ids.developerAppSecret, HTMLElement).hidden = false;
  value.focus();
}

/**
 * What an app's buttons do.
 * @typedef {object} AppActions
 * @property {() => void} edit
 * @property {(button: HTMLButtonElement) => void} rotate
 * @property {(button: HTMLButtonElement) => void} remove
 */

/**
 * @param {DeveloperApp} app
 * @param {AppActions} actions
 */
function appButtons(app, actions) {
  const rotate =
    app.type === "confidential"
      ? el("button", {
          type: "button",
          class: "secondary",
          "aria-label": t("account.developerApps.rotateLabel", { name: app.name }),
          text: t("account.developerApps.rotate"),
        })
      : null;
  rotate?.addEventListener("click", () => actions.rotate(rotate));
  const remove = el("button", {
    type: "button",
    class: "danger",
    "aria-label": t("account.developerApps.deleteLabel", { name: app.name }),
    text: t("account.developerApps.delete"),
  });
  remove.addEventListener("click", () => actions.remove(remove));
  return el(
    "div",
    { class: "buttons" },
    el("button", {
      type: "button",
      class: "secondary",
      "aria-label": t("account.developerApps.editLabel", { name: app.name }),
      text: t("account.developerApps.edit"),
      onclick: actions.edit,
    }),
    rotate,
    remove,
  );
}

/**
 * @param {DeveloperApp} app
 * @param {AppActions} actions
 */
function appItem(app, actions) {
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
    appButtons(app, actions),
  );
}

/**
 * The form's controls.
 * @param {HTMLFormElement} form
 */
function appFields(form) {
  return {
    name: control(form, "name", HTMLInputElement),
    type: control(form, "type", HTMLSelectElement),
    applicationType: control(form, "applicationType", HTMLSelectElement),
    refreshTokens: control(form, "refreshTokens", HTMLInputElement),
    redirectUris: control(form, "redirectUris", HTMLTextAreaElement),
  };
}

class DeveloperAppsSection {
  #form = byId(ids.developerAppForm, HTMLFormElement);
  #fields = appFields(this.#form);
  #failed;
  /**
   * The app being edited; undefined while the form creates one.
   * @type {DeveloperApp | undefined}
   */
  #editing;

  /** @param {ReportFailure} failed */
  constructor(failed) {
    this.#failed = failed;
    byId(ids.developerAppCancel, HTMLButtonElement).addEventListener("click", () => this.#stopEditing());
    this.#form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#save();
    });
  }

  async load() {
    try {
      /** @type {DeveloperAppList} */
      const { apps } = await getJson(APPS);
      byId(ids.developerAppsList, HTMLElement).replaceChildren(
        ...(apps.length === 0
          ? [el("li", { text: t("account.developerApps.none") })]
          : apps.map((app) =>
              appItem(app, {
                edit: () => this.#startEditing(app),
                rotate: (button) => this.#rotate(button, app),
                remove: (button) => this.#remove(button, app),
              }),
            )),
      );
    } catch (error) {
      this.#failed(SECTION, "account.notLoaded", error);
    }
  }

  /** The form's body: the whole app, as PUT replaces it. */
  #body() {
    const fields = this.#fields;
    return {
      name: fields.name.value.trim(),
      type: fields.type.value,
      applicationType: fields.applicationType.value,
      grantTypes: fields.refreshTokens.checked
        ? ["authorization_code", "refresh_token"]
        : ["authorization_code"],
      redirectUris: fields.redirectUris.value
        .split("\n")
        .map((uri) => uri.trim())
        .filter((uri) => uri !== ""),
    };
  }

  #stopEditing() {
    this.#editing = undefined;
    this.#form.reset();
    clearDetails(this.#form);
    this.#fields.type.disabled = false;
    byId(ids.developerAppFormLegend, HTMLElement).textContent = t("account.developerApps.create");
    submitButton(this.#form).textContent = t("account.developerApps.create");
    byId(ids.developerAppCancel, HTMLButtonElement).hidden = true;
  }

  /** @param {DeveloperApp} app */
  #startEditing(app) {
    const fields = this.#fields;
    this.#stopEditing();
    this.#editing = app;
    fields.name.value = app.name;
    fields.type.value = app.type;
    // Its type stays what it is: the Manager refuses a change.
    fields.type.disabled = true;
    fields.applicationType.value = app.applicationType;
    fields.refreshTokens.checked = app.grantTypes.includes("refresh_token");
    fields.redirectUris.value = app.redirectUris.join("\n");
    byId(ids.developerAppFormLegend, HTMLElement).textContent = t("account.developerApps.editing", {
      name: app.name,
    });
    submitButton(this.#form).textContent = t("account.developerApps.save");
    byId(ids.developerAppCancel, HTMLButtonElement).hidden = false;
    fields.name.focus();
  }

  #save() {
    clearDetails(this.#form);
    byId(ids.developerAppSecret, HTMLElement).hidden = true;
    const body = this.#body();
    const app = this.#editing;
    void act(SECTION, submitButton(this.#form), t("account.developerApps.saving"), async () => {
      try {
        if (app === undefined) {
          /** @type {DeveloperApp & { clientSecret: string | null }} */
          const created = await postJson(APPS, body);
          this.#stopEditing();
          if (created.clientSecret !== null) showSecret(created.name, created.clientSecret);
          setStatus(statusId(SECTION), t("account.developerApps.created", { name: created.name }));
        } else {
          /** @type {DeveloperApp} */
          const saved = await putJson(appPath(app), body);
          this.#stopEditing();
          setStatus(statusId(SECTION), t("account.developerApps.saved", { name: saved.name }));
        }
        await this.load();
      } catch (error) {
        this.#failed(SECTION, "account.developerApps.notSaved", error, this.#form);
      }
    });
  }

  /**
   * @param {HTMLButtonElement} button
   * @param {DeveloperApp} app
   */
  #rotate(button, app) {
    const grace = byId(ids.developerAppGrace, HTMLSelectElement);
    if (!window.confirm(t("account.developerApps.rotateQuestion", { name: app.name }))) return;
    void act(SECTION, button, t("account.developerApps.rotating"), async () => {
      try {
        /** @type {RotatedSecret} */
        const rotated = await postJson(`${appPath(app)}/rotate-secret`, {
          graceSeconds: Number(grace.value),
        });
        showSecret(app.name, rotated.clientSecret);
        setStatus(
          statusId(SECTION),
          rotated.previousSecretExpiresAt === null
            ? t("account.developerApps.rotatedNow", { name: app.name })
            : t("account.developerApps.rotated", {
                name: app.name,
                until: formatTime(rotated.previousSecretExpiresAt),
              }),
        );
        await this.load();
      } catch (error) {
        this.#failed(SECTION, "account.developerApps.notRotated", error);
      }
    });
  }

  /**
   * @param {HTMLButtonElement} button
   * @param {DeveloperApp} app
   */
  #remove(button, app) {
    if (!window.confirm(t("account.developerApps.deleteQuestion", { name: app.name }))) return;
    void act(SECTION, button, t("account.developerApps.deleting"), async () => {
      try {
        await deleteJson(appPath(app));
        if (this.#editing?.id === app.id) this.#stopEditing();
        setStatus(statusId(SECTION), t("account.developerApps.deleted", { name: app.name }));
        await this.load();
        byId(headingId(SECTION), HTMLElement).focus();
      } catch (error) {
        this.#failed(SECTION, "account.developerApps.notDeleted", error);
      }
    });
  }
}

/**
 * Wires the section and loads its list (the promise the page waits for).
 * @param {ReportFailure} failed
 */
export function startDeveloperApps(failed) {
  return new DeveloperAppsSection(failed).load();
}
