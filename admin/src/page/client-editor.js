/**
 * The clients view's editor: a form that creates a client or edits the chosen one (PUT, the
 * whole definition), its secret's rotation with a grace period, its deletion (confirmed), and
 * its grants (scopes per resource). A secret is shown once, right after it is made. Rotating and
 * deleting need a recent sign-in: the editor then offers to sign in again and comes back to the
 * same client (`?client=`).
 */
import { deleteJson, getJson, postJson, putJson } from "./api.js";
import { byId, control, el, formatTime, setStatus, submitButton, tableBody } from "./dom.js";
import { headingId, ids, sections, statusId } from "./element-ids.js";
import { t } from "./i18n.js";
import { act, clearDetails, failureReporter } from "./sections.js";

/** @typedef {import("@tjm/sdk").components["schemas"]} Schemas */
/** @typedef {Schemas["Client"]} Client */
/** @typedef {Schemas["ClientWithSecret"]} ClientWithSecret */
/** @typedef {Schemas["ClientGrant"]} ClientGrant */
/** @typedef {Schemas["ClientGrantList"]} ClientGrantList */
/** @typedef {Schemas["RotatedSecret"]} RotatedSecret */

export const CLIENTS_API = "/api/management/clients";

/** @param {Client} client */
const clientPath = (client) => `${CLIENTS_API}/${encodeURIComponent(client.id)}`;

/**
 * @param {Client} client
 * @param {string} resource
 */
const grantPath = (client, resource) => `${clientPath(client)}/oauth-grants/${encodeURIComponent(resource)}`;

const failed = failureReporter(
  "clients.reauth.needed",
  (section) => `${location.pathname}${location.search}#${section}`,
);

/**
 * Keeps the client being edited in the address: a reload or a sign-in again comes back to it.
 * @param {Client | undefined} client
 */
function rememberEditing(client) {
  const query = new URLSearchParams(location.search);
  if (client === undefined) query.delete("client");
  else query.set("client", client.id);
  history.replaceState(null, "", query.size > 0 ? `?${query}` : location.pathname);
}

/**
 * @param {string} name
 * @param {string} secret
 */
function showSecret(name, secret) {
  byId(ids.clientSecretHeading, HTMLElement).textContent = t("clients.secretHeading", { name });
  const value = byId(ids.clientSecretValue, HTMLInputElement);
  value.value = secret;
  byId(ids.clientSecret, HTMLElement).hidden = false;
  value.focus();
}

/** @param {string} text */
const lines = (text) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");

/** @param {HTMLFormElement} form */
const grantTypeBoxes = (form) =>
  [...form.querySelectorAll('input[name="grantTypes"]')].filter((box) => box instanceof HTMLInputElement);

/**
 * The editor form's controls.
 * @param {HTMLFormElement} form
 */
function editorFields(form) {
  return {
    name: control(form, "name", HTMLInputElement),
    type: control(form, "type", HTMLSelectElement),
    redirectUris: control(form, "redirectUris", HTMLTextAreaElement),
    postLogoutRedirectUris: control(form, "postLogoutRedirectUris", HTMLTextAreaElement),
    backchannelLogoutUri: control(form, "backchannelLogoutUri", HTMLInputElement),
    firstParty: control(form, "firstParty", HTMLInputElement),
    accessTokenTtlSeconds: control(form, "accessTokenTtlSeconds", HTMLInputElement),
  };
}

/**
 * @param {ClientGrant} grant
 * @param {(button: HTMLButtonElement) => void} remove
 */
function grantRow(grant, remove) {
  const button = el("button", {
    type: "button",
    class: "secondary",
    "aria-label": t("clients.grants.removeLabel", { resource: grant.resource }),
    text: t("clients.grants.remove"),
  });
  button.addEventListener("click", () => remove(button));
  return el(
    "tr",
    { "data-resource": grant.resource },
    el("td", {}, el("code", { dir: "ltr", text: grant.resource })),
    el("td", { dir: "ltr", text: grant.scopes.length === 0 ? t("common.none") : grant.scopes.join(" ") }),
    el("td", { text: formatTime(grant.grantedAt) }),
    el("td", {}, button),
  );
}

/** The editor and its grants; `listChanged` loads the clients' list again. */
export class ClientEditor {
  #form = byId(ids.clientForm, HTMLFormElement);
  #fields = editorFields(this.#form);
  #heading = byId(headingId(sections.editor), HTMLElement);
  #listChanged;
  /**
   * The client the editor shows; undefined while it creates one.
   * @type {Client | undefined}
   */
  editing;

  /** @param {() => Promise<void>} listChanged */
  constructor(listChanged) {
    this.#listChanged = listChanged;
    byId(ids.newClient, HTMLButtonElement).addEventListener("click", () => {
      this.#show(undefined);
      this.#fields.name.focus();
    });
    byId(ids.cancelEdit, HTMLButtonElement).addEventListener("click", () => {
      this.#show(undefined);
      this.#heading.focus();
    });
    this.#form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#save();
    });
    const rotate = byId(ids.rotateSecret, HTMLButtonElement);
    rotate.addEventListener("click", () => this.#rotate(rotate));
    const remove = byId(ids.deleteClient, HTMLButtonElement);
    remove.addEventListener("click", () => this.#delete(remove));
    const grantForm = byId(ids.grantForm, HTMLFormElement);
    grantForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#setGrant(grantForm);
    });
  }

  /** @param {string} id */
  async open(id) {
    try {
      this.#show(await getJson(`${CLIENTS_API}/${encodeURIComponent(id)}`));
      this.#heading.focus();
    } catch (error) {
      failed(sections.editor, "clients.notLoaded", error);
    }
  }

  /** @param {Client | undefined} client */
  #show(client) {
    const form = this.#form;
    const fields = this.#fields;
    form.reset();
    clearDetails(form);
    this.editing = client;
    rememberEditing(client);
    const creating = client === undefined;
    this.#heading.textContent = creating
      ? t("clients.createHeading")
      : t("clients.editHeading", { name: client.name });
    submitButton(form).textContent = creating ? t("clients.create") : t("clients.save");
    byId(ids.cancelEdit, HTMLButtonElement).hidden = creating;
    byId(ids.clientActions, HTMLElement).hidden = creating;
    byId(ids.rotateSecret, HTMLButtonElement).hidden = creating || client.type === "public";
    byId(sections.grants, HTMLElement).hidden = creating;
    // The type is chosen once: a PUT keeps it.
    fields.type.disabled = !creating;
    if (creating) return;
    fields.name.value = client.name;
    fields.type.value = client.type;
    for (const box of grantTypeBoxes(form)) box.checked = client.grantTypes.includes(box.value);
    fields.redirectUris.value = client.redirectUris.join("\n");
    fields.postLogoutRedirectUris.value = client.postLogoutRedirectUris.join("\n");
    fields.backchannelLogoutUri.value = client.backchannelLogoutUri ?? "";
    fields.firstParty.checked = client.firstParty;
    fields.accessTokenTtlSeconds.value = String(client.accessTokenTtlSeconds ?? "");
    void this.#loadGrants();
  }

  /** The form's definition: the whole representation, as PUT replaces it. */
  #definition() {
    const fields = this.#fields;
    const ttl = fields.accessTokenTtlSeconds.value.trim();
    const logout = fields.backchannelLogoutUri.value.trim();
    return {
      name: fields.name.value.trim(),
      grantTypes: grantTypeBoxes(this.#form)
        .filter((box) => box.checked)
        .map((box) => box.value),
      redirectUris: lines(fields.redirectUris.value),
      postLogoutRedirectUris: lines(fields.postLogoutRedirectUris.value),
      backchannelLogoutUri: logout === "" ? null : logout,
      firstParty: fields.firstParty.checked,
      // Projects are not edited here: the definition keeps the client's own.
      projectIds: this.editing?.projectIds ?? [],
      accessTokenTtlSeconds: ttl === "" ? null : Number(ttl),
    };
  }

  #save() {
    clearDetails(this.#form);
    byId(ids.clientSecret, HTMLElement).hidden = true;
    const client = this.editing;
    const body = this.#definition();
    void act(sections.editor, submitButton(this.#form), t("clients.saving"), async () => {
      try {
        if (client === undefined) {
          /** @type {ClientWithSecret} */
          const created = await postJson(CLIENTS_API, { ...body, type: this.#fields.type.value });
          this.#show(created);
          if (created.clientSecret !== null) showSecret(created.name, created.clientSecret);
          setStatus(statusId(sections.editor), t("clients.created", { name: created.name }));
        } else {
          /** @type {Client} */
          const saved = await putJson(clientPath(client), body);
          this.#show(saved);
          setStatus(statusId(sections.editor), t("clients.saved", { name: saved.name }));
        }
        await this.#listChanged();
      } catch (error) {
        failed(sections.editor, "clients.notSaved", error, this.#form);
      }
    });
  }

  /** @param {HTMLButtonElement} button */
  #rotate(button) {
    const client = this.editing;
    if (client === undefined || !window.confirm(t("clients.rotateQuestion", { name: client.name }))) return;
    const graceSeconds = Number(byId(ids.clientGrace, HTMLSelectElement).value);
    void act(sections.editor, button, t("clients.rotating"), async () => {
      try {
        /** @type {RotatedSecret} */
        const rotated = await postJson(`${CLIENTS_API}/rotate-secret`, { client: client.id, graceSeconds });
        setStatus(
          statusId(sections.editor),
          rotated.previousSecretExpiresAt === null
            ? t("clients.rotatedNow", { name: client.name })
            : t("clients.rotated", { name: client.name, until: formatTime(rotated.previousSecretExpiresAt) }),
        );
        showSecret(client.name, rotated.clientSecret);
      } catch (error) {
        failed(sections.editor, "clients.notRotated", error);
      }
    });
  }

  /** @param {HTMLButtonElement} button */
  #delete(button) {
    const client = this.editing;
    if (client === undefined || !window.confirm(t("clients.deleteQuestion", { name: client.name }))) return;
    void act(sections.editor, button, t("clients.deleting"), async () => {
      try {
        await deleteJson(clientPath(client));
        this.#show(undefined);
        setStatus(statusId(sections.editor), t("clients.deleted", { name: client.name }));
        await this.#listChanged();
        this.#heading.focus();
      } catch (error) {
        failed(sections.editor, "clients.notDeleted", error);
      }
    });
  }

  // Grants: the resources the client may get tokens for, each with its scopes beyond `access`.

  async #loadGrants() {
    const client = this.editing;
    if (client === undefined) return;
    try {
      /** @type {ClientGrantList} */
      const { grants } = await getJson(`${clientPath(client)}/oauth-grants`);
      if (this.editing !== client) return;
      const body = tableBody(ids.grantsTable);
      body.replaceChildren(
        ...grants.map((grant) => grantRow(grant, (button) => this.#removeGrant(button, grant))),
      );
      if (grants.length === 0)
        body.append(el("tr", {}, el("td", { colspan: 4, text: t("clients.grants.none") })));
    } catch (error) {
      failed(sections.grants, "clients.notLoaded", error);
    }
  }

  /**
   * @param {HTMLButtonElement} button
   * @param {ClientGrant} grant
   */
  #removeGrant(button, grant) {
    const client = this.editing;
    if (
      client === undefined ||
      !window.confirm(t("clients.grants.removeQuestion", { resource: grant.resource, name: client.name }))
    )
      return;
    void act(sections.grants, button, t("clients.grants.saving"), async () => {
      try {
        await deleteJson(grantPath(client, grant.resource));
        setStatus(statusId(sections.grants), t("clients.grants.removed", { resource: grant.resource }));
        await this.#loadGrants();
        byId(headingId(sections.grants), HTMLElement).focus();
      } catch (error) {
        failed(sections.grants, "clients.grants.notSaved", error);
      }
    });
  }

  /** @param {HTMLFormElement} form */
  #setGrant(form) {
    clearDetails(form);
    const client = this.editing;
    const resource = control(form, "resource_key", HTMLInputElement).value.trim();
    const scopes = control(form, "scopes", HTMLInputElement)
      .value.split(/\s+/)
      .filter((scope) => scope !== "");
    if (client === undefined) return;
    void act(sections.grants, submitButton(form), t("clients.grants.saving"), async () => {
      try {
        await putJson(grantPath(client, resource), { scopes });
        form.reset();
        setStatus(statusId(sections.grants), t("clients.grants.saved", { resource }));
        await this.#loadGrants();
      } catch (error) {
        failed(sections.grants, "clients.grants.notSaved", error, form);
      }
    });
  }
}
