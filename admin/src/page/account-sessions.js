/**
 * The account page's lists of where the account is signed in: its sessions (one revoked, or all
 * the others), the accounts remembered in this browser, and the apps connected to it (one
 * revoked).
 */
import { deleteJson, getJson, postJson } from "./api.js";
import { byId, el, formatTime, setStatus, tableBody } from "./dom.js";
import { headingId, ids, sections, statusId } from "./element-ids.js";
import { t } from "./i18n.js";
import { act } from "./sections.js";

/** @typedef {import("@tjm/sdk").components["schemas"]} Schemas */
/** @typedef {Schemas["AccountSession"]} AccountSession */
/** @typedef {Schemas["AccountSessionList"]} AccountSessionList */
/** @typedef {Schemas["RememberedAccount"]} RememberedAccount */
/** @typedef {Schemas["RememberedAccountList"]} RememberedAccountList */
/** @typedef {Schemas["ConnectedApp"]} ConnectedApp */
/** @typedef {Schemas["ConnectedAppList"]} ConnectedAppList */
/** @typedef {Schemas["SessionsEnded"]} SessionsEnded */
/** @typedef {import("./sections.js").ReportFailure} ReportFailure */

/**
 * @param {AccountSession} session
 * @param {(button: HTMLButtonElement) => void} revoke
 */
function sessionRow(session, revoke) {
  const created = formatTime(session.createdAt);
  const apps = session.clients.map((client) => client.name ?? client.clientId).join(", ");
  let action;
  if (session.current) action = el("strong", { text: t("account.sessions.current") });
  else {
    const button = el("button", {
      type: "button",
      class: "secondary",
      "aria-label": t("account.sessions.revokeLabel", { created }),
      text: t("account.sessions.revoke"),
    });
    button.addEventListener("click", () => revoke(button));
    action = button;
  }
  return el(
    "tr",
    { "data-session-id": session.id, "data-current": session.current ? "true" : undefined },
    el("td", { dir: "auto", text: session.userAgent ?? t("account.sessions.unknownBrowser") }),
    el("td", { dir: "ltr", text: session.clientAddress ?? t("common.none") }),
    el("td", { text: created }),
    el("td", { text: formatTime(session.lastUsedAt) }),
    el("td", { dir: "auto", text: apps === "" ? t("common.none") : apps }),
    el("td", {}, action),
  );
}

/** @param {RememberedAccount} account */
function rememberedItem(account) {
  return el(
    "li",
    { "data-account-id": account.id, "aria-current": account.current ? "true" : undefined },
    account.avatarUrl === null
      ? el("span", { class: "avatar small", "aria-hidden": "true" })
      : el("img", {
          class: "avatar small",
          src: account.avatarUrl,
          width: 40,
          height: 40,
          alt: t("account.remembered.avatarAlt", { name: account.name }),
        }),
    el(
      "span",
      {},
      el("strong", { dir: "auto", text: account.name }),
      " ",
      el("span", { dir: "ltr", text: account.email }),
      " — ",
      t("account.remembered.state", {
        current: String(account.current),
        signedIn: String(account.signedIn),
      }),
    ),
  );
}

/**
 * @param {ConnectedApp} app
 * @param {string} name
 * @param {(button: HTMLButtonElement) => void} revoke
 */
function appItem(app, name, revoke) {
  const access = [...app.scopes, ...app.resources.map((resource) => resource.resource)].join(", ");
  const button = el("button", {
    type: "button",
    class: "secondary",
    "aria-label": t("account.apps.revokeLabel", { name }),
    text: t("account.apps.revoke"),
  });
  button.addEventListener("click", () => revoke(button));
  return el(
    "li",
    { "data-client-id": app.clientId },
    el("strong", { dir: "auto", text: name }),
    el("span", { dir: "auto", text: t("account.apps.access", { scopes: access }) }),
    el("span", {
      text: t("account.apps.used", { first: formatTime(app.firstUsedAt), last: formatTime(app.lastUsedAt) }),
    }),
    button,
  );
}

export class AccountLists {
  #failed;

  /** @param {ReportFailure} failed */
  constructor(failed) {
    this.#failed = failed;
    const others = byId(ids.revokeOthers, HTMLButtonElement);
    others.addEventListener("click", () => this.#revokeOthers(others));
  }

  async loadSessions() {
    try {
      /** @type {AccountSessionList} */
      const { sessions } = await getJson("/api/me/sessions");
      tableBody(ids.sessionsTable).replaceChildren(
        ...sessions.map((session) => sessionRow(session, (button) => this.#revokeSession(button, session))),
      );
      byId(ids.revokeOthers, HTMLButtonElement).disabled = sessions.every((session) => session.current);
    } catch (error) {
      this.#failed(sections.sessions, "account.notLoaded", error);
    }
  }

  /**
   * @param {HTMLButtonElement} button
   * @param {AccountSession} session
   */
  #revokeSession(button, session) {
    if (!window.confirm(t("account.sessions.revokeQuestion"))) return;
    void act(sections.sessions, button, t("account.logout.working"), async () => {
      try {
        await deleteJson(`/api/me/sessions/${encodeURIComponent(session.id)}`);
        setStatus(statusId(sections.sessions), t("account.sessions.revoked"));
        await this.loadSessions();
        byId(headingId(sections.sessions), HTMLElement).focus();
      } catch (error) {
        this.#failed(sections.sessions, "account.sessions.notRevoked", error);
      }
    });
  }

  /** @param {HTMLButtonElement} others */
  #revokeOthers(others) {
    if (!window.confirm(t("account.sessions.revokeOthersQuestion"))) return;
    void act(sections.sessions, others, t("account.logout.working"), async () => {
      try {
        /** @type {SessionsEnded} */
        const { sessionsEnded } = await postJson("/api/me/sessions/revoke-others");
        setStatus(statusId(sections.sessions), t("account.sessions.othersRevoked", { count: sessionsEnded }));
        await this.loadSessions();
      } catch (error) {
        this.#failed(sections.sessions, "account.sessions.notRevoked", error);
      }
    });
  }

  async loadRemembered() {
    try {
      /** @type {RememberedAccountList} */
      const { accounts } = await getJson("/api/me/accounts");
      byId(ids.rememberedList, HTMLElement).replaceChildren(...accounts.map(rememberedItem));
    } catch (error) {
      this.#failed(sections.remembered, "account.notLoaded", error);
    }
  }

  async loadApps() {
    try {
      /** @type {ConnectedAppList} */
      const { apps } = await getJson("/api/me/connected-apps");
      byId(ids.appsList, HTMLElement).replaceChildren(
        ...(apps.length === 0
          ? [el("li", { text: t("account.apps.none") })]
          : apps.map((app) => {
              const name = app.name ?? t("account.apps.unnamed", { clientId: app.clientId });
              return appItem(app, name, (button) => this.#revokeApp(button, app, name));
            })),
      );
    } catch (error) {
      this.#failed(sections.apps, "account.notLoaded", error);
    }
  }

  /**
   * @param {HTMLButtonElement} button
   * @param {ConnectedApp} app
   * @param {string} name
   */
  #revokeApp(button, app, name) {
    if (!window.confirm(t("account.apps.revokeQuestion", { name }))) return;
    void act(sections.apps, button, t("account.apps.revoking"), async () => {
      try {
        await deleteJson(`/api/me/connected-apps/${encodeURIComponent(app.clientId)}`);
        setStatus(statusId(sections.apps), t("account.apps.revoked", { name }));
        await this.loadApps();
        byId(headingId(sections.apps), HTMLElement).focus();
      } catch (error) {
        this.#failed(sections.apps, "account.apps.notRevoked", error);
      }
    });
  }
}
