/**
 * Client management, for an account holding the client-admin role, through the console's
 * /api/management/clients…: the clients (name search, type filter, pages of 20), a form that
 * creates a client or edits the chosen one (PUT, the whole definition), its secret's rotation
 * with a grace period, its deletion (confirmed), and its grants (scopes per resource). A secret
 * is shown once, right after it is made. Rotating and deleting need a recent sign-in: the
 * editor then offers to sign in again and comes back to the same client (`?client=`).
 */
import { deleteJson, errorMessage, getJson, postJson, putJson } from "./api.js";
import { el, formatTime, setStatus, showPage } from "./dom.js";
import { t } from "./i18n.js";
import { act, clearDetails, reportFailure } from "./sections.js";

const API = "/api/management/clients";
const PAGE_SIZE = 20;

const clientPath = (client) => `${API}/${encodeURIComponent(client.id)}`;

/** The client the editor shows; undefined while it creates one. */
let editing;
let reloadList = async () => {};

function failed(section, messageKey, error, form) {
  reportFailure(section, error, form, {
    failed: t(messageKey, { error: errorMessage(error) }),
    reauthNeeded: t("clients.reauth.needed"),
    returnTo: `${location.pathname}${location.search}#${section}`,
  });
}

/** Keeps the client being edited in the address: a reload or a sign-in again comes back to it. */
function rememberEditing(client) {
  const query = new URLSearchParams(location.search);
  if (client === undefined) query.delete("client");
  else query.set("client", client.id);
  history.replaceState(null, "", query.size > 0 ? `?${query}` : location.pathname);
}

function showSecret(name, secret) {
  document.getElementById("client-secret-heading").textContent = t("clients.secretHeading", { name });
  document.getElementById("client-secret-value").value = secret;
  document.getElementById("client-secret").hidden = false;
  document.getElementById("client-secret-value").focus();
}

const lines = (text) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");

/** The form's definition: the whole representation, as PUT replaces it. */
function definition(form) {
  const ttl = form.elements.accessTokenTtlSeconds.value.trim();
  const logout = form.elements.backchannelLogoutUri.value.trim();
  return {
    name: form.elements.name.value.trim(),
    grantTypes: [...form.querySelectorAll('input[name="grantTypes"]:checked')].map((box) => box.value),
    redirectUris: lines(form.elements.redirectUris.value),
    postLogoutRedirectUris: lines(form.elements.postLogoutRedirectUris.value),
    backchannelLogoutUri: logout === "" ? null : logout,
    firstParty: form.elements.firstParty.checked,
    // Projects are not edited here: the definition keeps the client's own.
    projectIds: editing?.projectIds ?? [],
    accessTokenTtlSeconds: ttl === "" ? null : Number(ttl),
  };
}

function showEditor(client) {
  const form = document.getElementById("client-form");
  form.reset();
  clearDetails(form);
  editing = client;
  rememberEditing(client);
  const creating = client === undefined;
  document.getElementById("editor-heading").textContent = creating
    ? t("clients.createHeading")
    : t("clients.editHeading", { name: client.name });
  form.querySelector('button[type="submit"]').textContent = creating
    ? t("clients.create")
    : t("clients.save");
  document.getElementById("cancel-edit").hidden = creating;
  document.getElementById("client-actions").hidden = creating;
  document.getElementById("rotate-secret").hidden = creating || client.type === "public";
  document.getElementById("grants").hidden = creating;
  // The type is chosen once: a PUT keeps it.
  form.elements.type.disabled = !creating;
  if (creating) return;
  form.elements.name.value = client.name;
  form.elements.type.value = client.type;
  for (const box of form.querySelectorAll('input[name="grantTypes"]'))
    box.checked = client.grantTypes.includes(box.value);
  form.elements.redirectUris.value = client.redirectUris.join("\n");
  form.elements.postLogoutRedirectUris.value = client.postLogoutRedirectUris.join("\n");
  form.elements.backchannelLogoutUri.value = client.backchannelLogoutUri ?? "";
  form.elements.firstParty.checked = client.firstParty;
  form.elements.accessTokenTtlSeconds.value = client.accessTokenTtlSeconds ?? "";
  void loadGrants();
}

async function openClient(id) {
  try {
    showEditor(await getJson(`${API}/${encodeURIComponent(id)}`));
    document.getElementById("editor-heading").focus();
  } catch (error) {
    failed("editor", "clients.notLoaded", error);
  }
}

function clientRow(client) {
  return el(
    "tr",
    { "data-client-id": client.clientId },
    el("td", { dir: "auto", text: client.name }),
    el("td", {}, el("code", { dir: "ltr", text: client.clientId })),
    el("td", { text: t("clients.typeValue", { type: client.type }) }),
    el("td", { dir: "ltr", text: client.grantTypes.join(", ") }),
    el("td", { text: formatTime(client.createdAt) }),
    el(
      "td",
      {},
      el("button", {
        type: "button",
        class: "secondary",
        "aria-label": t("clients.editLabel", { name: client.name }),
        text: t("clients.edit"),
        onclick: () => void openClient(client.id),
      }),
    ),
  );
}

function startList() {
  const form = document.getElementById("client-filters");
  const body = document.querySelector("#clients-table tbody");
  const previous = document.querySelector('[data-page="previous"]');
  const next = document.querySelector('[data-page="next"]');
  const position = document.querySelector('[data-page="position"]');
  const url = new URLSearchParams(location.search);
  form.elements.name.value = url.get("name") ?? "";
  form.elements.type.value = url.get("type") ?? "";
  let offset = Math.max(0, Number(url.get("offset")) || 0);

  const load = async () => {
    const query = new URLSearchParams();
    const name = form.elements.name.value.trim();
    if (name !== "") query.set("name", name);
    if (form.elements.type.value) query.set("type", form.elements.type.value);
    if (offset > 0) query.set("offset", String(offset));
    if (editing !== undefined) query.set("client", editing.id);
    history.replaceState(null, "", query.size > 0 ? `?${query}` : location.pathname);
    query.delete("client");
    query.set("limit", String(PAGE_SIZE));
    query.set("offset", String(offset));
    try {
      const list = await getJson(`${API}?${query}`);
      showPage(
        { body, position, previous, next },
        {
          rows: list.items.map(clientRow),
          columns: 6,
          emptyText: t("clients.empty"),
          offset,
          pageSize: PAGE_SIZE,
          total: list.total,
          positionText: (rows) => t("clients.position", rows),
        },
      );
      setStatus("view-status", "");
    } catch (error) {
      setStatus("view-status", t("clients.notLoaded", { error: errorMessage(error) }));
    }
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    offset = 0;
    void load();
  });
  form.elements.type.addEventListener("change", () => {
    offset = 0;
    void load();
  });
  previous.addEventListener("click", () => {
    offset = Math.max(0, offset - PAGE_SIZE);
    void load();
  });
  next.addEventListener("click", () => {
    offset += PAGE_SIZE;
    void load();
  });
  reloadList = load;
  return load();
}

function startEditor() {
  const form = document.getElementById("client-form");
  document.getElementById("new-client").addEventListener("click", () => {
    showEditor(undefined);
    form.elements.name.focus();
  });
  document.getElementById("cancel-edit").addEventListener("click", () => {
    showEditor(undefined);
    document.getElementById("editor-heading").focus();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearDetails(form);
    document.getElementById("client-secret").hidden = true;
    const client = editing;
    const body = definition(form);
    const button = form.querySelector('button[type="submit"]');
    void act("editor", button, t("clients.saving"), async () => {
      try {
        if (client === undefined) {
          const created = await postJson(API, { ...body, type: form.elements.type.value });
          showEditor(created);
          if (created.clientSecret !== null) showSecret(created.name, created.clientSecret);
          setStatus("editor-status", t("clients.created", { name: created.name }));
          await reloadList();
        } else {
          const saved = await putJson(clientPath(client), body);
          showEditor(saved);
          setStatus("editor-status", t("clients.saved", { name: saved.name }));
          await reloadList();
        }
      } catch (error) {
        failed("editor", "clients.notSaved", error, form);
      }
    });
  });

  const rotate = document.getElementById("rotate-secret");
  rotate.addEventListener("click", () => {
    const client = editing;
    if (!window.confirm(t("clients.rotateQuestion", { name: client.name }))) return;
    const graceSeconds = Number(document.getElementById("client-grace").value);
    void act("editor", rotate, t("clients.rotating"), async () => {
      try {
        const rotated = await postJson(`${API}/rotate-secret`, { client: client.id, graceSeconds });
        setStatus(
          "editor-status",
          rotated.previousSecretExpiresAt === null
            ? t("clients.rotatedNow", { name: client.name })
            : t("clients.rotated", { name: client.name, until: formatTime(rotated.previousSecretExpiresAt) }),
        );
        showSecret(client.name, rotated.clientSecret);
      } catch (error) {
        failed("editor", "clients.notRotated", error);
      }
    });
  });

  const remove = document.getElementById("delete-client");
  remove.addEventListener("click", () => {
    const client = editing;
    if (!window.confirm(t("clients.deleteQuestion", { name: client.name }))) return;
    void act("editor", remove, t("clients.deleting"), async () => {
      try {
        await deleteJson(clientPath(client));
        showEditor(undefined);
        setStatus("editor-status", t("clients.deleted", { name: client.name }));
        await reloadList();
        document.getElementById("editor-heading").focus();
      } catch (error) {
        failed("editor", "clients.notDeleted", error);
      }
    });
  });
}

// Grants: the resources the client may get tokens for, each with its scopes beyond `access`.

function grantRow(grant) {
  return el(
    "tr",
    { "data-resource": grant.resource },
    el("td", {}, el("code", { dir: "ltr", text: grant.resource })),
    el("td", { dir: "ltr", text: grant.scopes.length === 0 ? t("common.none") : grant.scopes.join(" ") }),
    el("td", { text: formatTime(grant.grantedAt) }),
    el(
      "td",
      {},
      el("button", {
        type: "button",
        class: "secondary",
        "aria-label": t("clients.grants.removeLabel", { resource: grant.resource }),
        text: t("clients.grants.remove"),
        onclick: (event) => removeGrant(event.currentTarget, grant),
      }),
    ),
  );
}

async function loadGrants() {
  const client = editing;
  try {
    const { grants } = await getJson(`${clientPath(client)}/oauth-grants`);
    if (editing !== client) return;
    const body = document.querySelector("#grants-table tbody");
    body.replaceChildren(...grants.map(grantRow));
    if (grants.length === 0)
      body.append(el("tr", {}, el("td", { colspan: 4, text: t("clients.grants.none") })));
  } catch (error) {
    failed("grants", "clients.notLoaded", error);
  }
}

const grantPath = (client, resource) => `${clientPath(client)}/oauth-grants/${encodeURIComponent(resource)}`;

function removeGrant(button, grant) {
  const client = editing;
  if (!window.confirm(t("clients.grants.removeQuestion", { resource: grant.resource, name: client.name })))
    return;
  void act("grants", button, t("clients.grants.saving"), async () => {
    try {
      await deleteJson(grantPath(client, grant.resource));
      setStatus("grants-status", t("clients.grants.removed", { resource: grant.resource }));
      await loadGrants();
      document.getElementById("grants-heading").focus();
    } catch (error) {
      failed("grants", "clients.grants.notSaved", error);
    }
  });
}

function startGrants() {
  const form = document.getElementById("grant-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearDetails(form);
    const client = editing;
    const resource = form.elements.resource_key.value.trim();
    const scopes = form.elements.scopes.value.split(/\s+/).filter((scope) => scope !== "");
    const button = form.querySelector('button[type="submit"]');
    void act("grants", button, t("clients.grants.saving"), async () => {
      try {
        await putJson(grantPath(client, resource), { scopes });
        form.reset();
        setStatus("grants-status", t("clients.grants.saved", { resource }));
        await loadGrants();
      } catch (error) {
        failed("grants", "clients.grants.notSaved", error, form);
      }
    });
  });
}

export async function start() {
  for (const heading of document.querySelectorAll("main section h2")) heading.tabIndex = -1;
  startEditor();
  startGrants();
  const chosen = new URLSearchParams(location.search).get("client");
  await Promise.all([startList(), chosen === null ? undefined : openClient(chosen)]);
  // Back from signing in again for an action: that section's heading has the focus.
  if (location.hash !== "") document.getElementById(`${location.hash.slice(1)}-heading`)?.focus();
}
