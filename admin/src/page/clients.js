/**
 * Client management, for an account holding the client-admin role, through the console's
 * /api/management/clients…: the clients (name search, type filter, pages of 20) and the editor
 * (client-editor.js) of a new client or of the one chosen.
 */
import { errorMessage, getJson } from "./api.js";
import { CLIENTS_API, ClientEditor } from "./client-editor.js";
import { byId, control, el, formatTime, setStatus } from "./dom.js";
import { ids } from "./element-ids.js";
import { t } from "./i18n.js";
import { Pager } from "./pager.js";
import { focusableHeadings, focusReturnedSection } from "./sections.js";

/** @typedef {import("@tjm/sdk").components["schemas"]["Client"]} Client */
/** @typedef {import("@tjm/sdk").components["schemas"]["ClientList"]} ClientList */

const PAGE_SIZE = 20;

/**
 * @param {Client} client
 * @param {ClientEditor} editor
 */
function clientRow(client, editor) {
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
        onclick: () => void editor.open(client.id),
      }),
    ),
  );
}

/**
 * The clients' list, its loading returned: its filters and page are kept in the address, with
 * the client `editor` shows.
 * @param {ClientEditor} editor
 */
function clientList(editor) {
  const form = byId(ids.clientFilters, HTMLFormElement);
  const name = control(form, "name", HTMLInputElement);
  const type = control(form, "type", HTMLSelectElement);
  const url = new URLSearchParams(location.search);
  name.value = url.get("name") ?? "";
  type.value = url.get("type") ?? "";

  const load = async () => {
    const query = new URLSearchParams();
    if (name.value.trim() !== "") query.set("name", name.value.trim());
    if (type.value) query.set("type", type.value);
    if (pager.offset > 0) query.set("offset", String(pager.offset));
    if (editor.editing !== undefined) query.set("client", editor.editing.id);
    history.replaceState(null, "", query.size > 0 ? `?${query}` : location.pathname);
    query.delete("client");
    query.set("limit", String(PAGE_SIZE));
    query.set("offset", String(pager.offset));
    try {
      /** @type {ClientList} */
      const list = await getJson(`${CLIENTS_API}?${query}`);
      pager.show(
        list.items.map((client) => clientRow(client, editor)),
        list.total,
      );
      setStatus(ids.viewStatus, "");
    } catch (error) {
      setStatus(ids.viewStatus, t("clients.notLoaded", { error: errorMessage(error) }));
    }
  };
  const pager = new Pager({
    tableId: ids.clientsTable,
    pageSize: PAGE_SIZE,
    columns: 6,
    emptyText: t("clients.empty"),
    positionText: (rows) => t("clients.position", rows),
    load,
    offset: Number(url.get("offset")) || 0,
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    pager.restart();
  });
  type.addEventListener("change", () => pager.restart());
  return load;
}

export async function start() {
  focusableHeadings();
  // The editor reloads the list after a change; the list opens a client in the editor.
  const editor = new ClientEditor(() => loadList());
  const loadList = clientList(editor);
  const chosen = new URLSearchParams(location.search).get("client");
  await Promise.all([loadList(), chosen === null ? undefined : editor.open(chosen)]);
  focusReturnedSection();
}
