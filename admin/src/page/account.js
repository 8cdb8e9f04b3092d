/**
 * The account's own page: profile and avatar, e-mail and phone with the code step, password,
 * sessions, the accounts remembered in this browser, connected apps, logging out and deleting
 * the account, all through the console's /api/me… (the console holds the token, never the page).
 * An action the Manager refuses for want of a recent sign-in (403
 * auth.reauthentication_required) offers to sign in again with the max_age it names; the
 * sign-in comes back to the same section of this page.
 */

import { startDeveloperApps } from "./account-developer-apps.js";
import { startMfa } from "./account-mfa.js";
import { deleteJson, errorMessage, getJson, patchJson, postFile, postJson, signOut } from "./api.js";
import { el, formatTime, setStatus } from "./dom.js";
import { t } from "./i18n.js";
import { act, clearDetails, reportFailure as reportSectionFailure, signInUrl } from "./sections.js";

const PAGE = "/account";

/** Reports a section's failure: `messageKey` takes the error; a stale sign-in comes back to the section. */
function reportFailure(section, messageKey, error, form) {
  reportSectionFailure(section, error, form, {
    failed: t(messageKey, { error: errorMessage(error) }),
    reauthNeeded: t("account.reauth.needed"),
    returnTo: `${PAGE}#${section}`,
  });
}

/** The console session ends with the provider's: its cookie goes, then the signed-out page. */
async function signedOut() {
  await signOut().catch(() => undefined);
  location.assign("/auth/signed-out");
}

// Profile and avatar.

let snapshot;

function showDescriptionField() {
  const form = document.getElementById("profile-form");
  document.getElementById("gender-description-field").hidden =
    form.elements.gender.value !== "self-described";
}

function showSnapshot(next) {
  snapshot = next;
  const image = document.getElementById("avatar-image");
  if (next.avatarUrl !== null) image.src = next.avatarUrl;
  image.hidden = next.avatarUrl === null;
  document.getElementById("no-avatar").hidden = next.avatarUrl !== null;
  document.getElementById("remove-avatar").hidden = next.avatarUrl === null;
  const form = document.getElementById("profile-form");
  form.elements.name.value = next.name;
  form.elements.dateOfBirth.value = next.dateOfBirth ?? "";
  form.elements.gender.value = next.gender ?? "";
  form.elements.genderDescription.value = next.genderDescription ?? "";
  form.elements.locale.value = next.locale ?? "";
  showDescriptionField();
  showIdentifiers({
    email: next.email.address,
    emailVerified: next.email.verified,
    phone: next.phone?.number ?? null,
    phoneVerified: next.phone?.verified ?? false,
  });
}

/** The fields that differ from the snapshot: an unchanged profile sends an empty change. */
function profileChange(form) {
  const value = (name) => {
    const text = form.elements[name].value.trim();
    return text === "" ? null : text;
  };
  const entered = {
    name: form.elements.name.value.trim(),
    dateOfBirth: value("dateOfBirth"),
    gender: value("gender"),
    locale: value("locale"),
  };
  const change = Object.fromEntries(Object.entries(entered).filter(([name, v]) => v !== snapshot[name]));
  const description = value("genderDescription");
  if (
    entered.gender === "self-described" &&
    (description !== snapshot.genderDescription || "gender" in change)
  ) {
    change.genderDescription = description;
  }
  return change;
}

function startProfile() {
  const form = document.getElementById("profile-form");
  form.elements.gender.addEventListener("change", showDescriptionField);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearDetails(form);
    const button = form.querySelector('button[type="submit"]');
    void act("profile", button, t("account.profile.saving"), async () => {
      try {
        showSnapshot(await patchJson("/api/me/profile", profileChange(form)));
        setStatus("profile-status", t("account.profile.saved"));
      } catch (error) {
        reportFailure("profile", "account.profile.notSaved", error, form);
      }
    });
  });

  const avatarForm = document.getElementById("avatar-form");
  const file = document.getElementById("avatar-file");
  avatarForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) {
      setStatus("profile-status", t("account.profile.chooseFile"));
      file.focus();
      return;
    }
    const button = avatarForm.querySelector('button[type="submit"]');
    void act("profile", button, t("account.profile.uploading"), async () => {
      try {
        showSnapshot(await postFile("/api/me/profile/avatar", chosen));
        avatarForm.reset();
        setStatus("profile-status", t("account.profile.uploaded"));
        void loadRemembered();
      } catch (error) {
        reportFailure("profile", "account.profile.notUploaded", error);
      }
    });
  });
  const remove = document.getElementById("remove-avatar");
  remove.addEventListener("click", () => {
    void act("profile", remove, t("account.profile.saving"), async () => {
      try {
        showSnapshot(await patchJson("/api/me/profile", { avatarUploadId: null }));
        setStatus("profile-status", t("account.profile.removed"));
        file.focus();
      } catch (error) {
        reportFailure("profile", "account.profile.notUploaded", error);
      }
    });
  });
}

// E-mail and phone, each change confirmed by the code sent to the new one.

let pendingChanges = [];

function showIdentifiers(identifiers) {
  const value = (identifier, verified) =>
    t("account.identifiers.value", { identifier, verified: String(verified) });
  document.getElementById("identifiers-summary").replaceChildren(
    el("dt", { text: t("account.identifiers.email") }),
    el("dd", { dir: "auto", text: value(identifiers.email, identifiers.emailVerified) }),
    el("dt", { text: t("account.identifiers.phone") }),
    el("dd", {
      dir: "auto",
      text:
        identifiers.phone === null
          ? t("account.identifiers.noPhone")
          : value(identifiers.phone, identifiers.phoneVerified),
    }),
  );
  if (identifiers.pendingChanges !== undefined) showPending(identifiers.pendingChanges);
}

/** The code step of the first change waiting for its code; hidden when none waits. */
function showPending(changes) {
  pendingChanges = changes;
  const form = document.getElementById("code-form");
  const [change] = changes;
  form.hidden = change === undefined;
  if (change === undefined) return;
  document.getElementById("code-intro").textContent = t("account.identifiers.codeSent", {
    identifier: change.identifier,
    expires: formatTime(change.expiresAt),
  });
  form.elements.code.value = "";
}

function startIdentifiers() {
  const form = document.getElementById("identifiers-form");
  const codeForm = document.getElementById("code-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearDetails(form);
    const email = form.elements.email.value.trim();
    const phone = form.elements.phone.value.trim();
    if (email === "" && phone === "") {
      setStatus("identifiers-status", t("account.identifiers.nameOne"));
      form.elements.email.focus();
      return;
    }
    const button = form.querySelector('button[type="submit"]');
    void act("identifiers", button, t("account.identifiers.requesting"), async () => {
      try {
        const identifiers = await patchJson("/api/me/identifiers", {
          ...(email === "" ? {} : { email }),
          ...(phone === "" ? {} : { phone }),
        });
        form.reset();
        showIdentifiers(identifiers);
        const [change] = pendingChanges;
        setStatus(
          "identifiers-status",
          change === undefined ? "" : t("account.identifiers.pending", { identifier: change.identifier }),
        );
        codeForm.elements.code.focus();
      } catch (error) {
        reportFailure("identifiers", "account.identifiers.notRequested", error, form);
      }
    });
  });

  codeForm.addEventListener("submit", (event) => {
    event.preventDefault();
    clearDetails(codeForm);
    const [change] = pendingChanges;
    const button = codeForm.querySelector('button[type="submit"]');
    void act("identifiers", button, t("account.identifiers.verifying"), async () => {
      try {
        const identifiers = await postJson("/api/me/identifiers/verifications", {
          changeId: change.id,
          code: codeForm.elements.code.value.trim(),
        });
        showIdentifiers(identifiers);
        setStatus(
          "identifiers-status",
          t("account.identifiers.changed", { identifier: change.identifier, channel: change.channel }),
        );
        (pendingChanges.length > 0 ? codeForm.elements.code : form.elements.email).focus();
      } catch (error) {
        reportFailure("identifiers", "account.identifiers.notVerified", error, codeForm);
      }
    });
  });

  const cancel = document.getElementById("cancel-change");
  cancel.addEventListener("click", () => {
    const [change, ...rest] = pendingChanges;
    void act("identifiers", cancel, t("account.identifiers.cancelling"), async () => {
      try {
        await deleteJson(`/api/me/identifiers/changes/${encodeURIComponent(change.id)}`);
        showPending(rest);
        setStatus("identifiers-status", t("account.identifiers.cancelled"));
        form.elements.email.focus();
      } catch (error) {
        reportFailure("identifiers", "account.identifiers.notCancelled", error);
      }
    });
  });
}

// Password.

function startPassword() {
  const form = document.getElementById("password-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearDetails(form);
    const button = form.querySelector('button[type="submit"]');
    void act("password", button, t("account.password.changing"), async () => {
      try {
        await postJson("/api/me/password", {
          current_password: form.elements.current_password.value,
          new_password: form.elements.new_password.value,
          revoke_other_sessions: form.elements.revoke_other_sessions.checked,
        });
        form.reset();
        setStatus("password-status", t("account.password.changed"));
        void loadSessions();
      } catch (error) {
        reportFailure("password", "account.password.notChanged", error, form);
      }
    });
  });
}

// Sessions.

function sessionRow(session) {
  const created = formatTime(session.createdAt);
  const apps = session.clients.map((client) => client.name ?? client.clientId).join(", ");
  const action = session.current
    ? el("strong", { text: t("account.sessions.current") })
    : el("button", {
        type: "button",
        class: "secondary",
        "aria-label": t("account.sessions.revokeLabel", { created }),
        text: t("account.sessions.revoke"),
        onclick: (event) => revokeSession(event.currentTarget, session),
      });
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

async function loadSessions() {
  try {
    const { sessions } = await getJson("/api/me/sessions");
    document.querySelector("#sessions-table tbody").replaceChildren(...sessions.map(sessionRow));
    document.getElementById("revoke-others").disabled = sessions.every((session) => session.current);
  } catch (error) {
    reportFailure("sessions", "account.notLoaded", error);
  }
}

function revokeSession(button, session) {
  if (!window.confirm(t("account.sessions.revokeQuestion"))) return;
  void act("sessions", button, t("account.logout.working"), async () => {
    try {
      await deleteJson(`/api/me/sessions/${encodeURIComponent(session.id)}`);
      setStatus("sessions-status", t("account.sessions.revoked"));
      await loadSessions();
      document.getElementById("sessions-heading").focus();
    } catch (error) {
      reportFailure("sessions", "account.sessions.notRevoked", error);
    }
  });
}

function startSessions() {
  const others = document.getElementById("revoke-others");
  others.addEventListener("click", () => {
    if (!window.confirm(t("account.sessions.revokeOthersQuestion"))) return;
    void act("sessions", others, t("account.logout.working"), async () => {
      try {
        const { sessionsEnded } = await postJson("/api/me/sessions/revoke-others");
        setStatus("sessions-status", t("account.sessions.othersRevoked", { count: sessionsEnded }));
        await loadSessions();
      } catch (error) {
        reportFailure("sessions", "account.sessions.notRevoked", error);
      }
    });
  });
}

// The accounts remembered in this browser.

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

async function loadRemembered() {
  try {
    const { accounts } = await getJson("/api/me/accounts");
    document.getElementById("remembered-list").replaceChildren(...accounts.map(rememberedItem));
  } catch (error) {
    reportFailure("remembered", "account.notLoaded", error);
  }
}

// Connected apps.

function appItem(app) {
  const name = app.name ?? t("account.apps.unnamed", { clientId: app.clientId });
  const access = [...app.scopes, ...app.resources.map((resource) => resource.resource)].join(", ");
  return el(
    "li",
    { "data-client-id": app.clientId },
    el("strong", { dir: "auto", text: name }),
    el("span", { dir: "auto", text: t("account.apps.access", { scopes: access }) }),
    el("span", {
      text: t("account.apps.used", { first: formatTime(app.firstUsedAt), last: formatTime(app.lastUsedAt) }),
    }),
    el("button", {
      type: "button",
      class: "secondary",
      "aria-label": t("account.apps.revokeLabel", { name }),
      text: t("account.apps.revoke"),
      onclick: (event) => revokeApp(event.currentTarget, app, name),
    }),
  );
}

async function loadApps() {
  try {
    const { apps } = await getJson("/api/me/connected-apps");
    document
      .getElementById("apps-list")
      .replaceChildren(
        ...(apps.length === 0 ? [el("li", { text: t("account.apps.none") })] : apps.map(appItem)),
      );
  } catch (error) {
    reportFailure("apps", "account.notLoaded", error);
  }
}

function revokeApp(button, app, name) {
  if (!window.confirm(t("account.apps.revokeQuestion", { name }))) return;
  void act("apps", button, t("account.apps.revoking"), async () => {
    try {
      await deleteJson(`/api/me/connected-apps/${encodeURIComponent(app.clientId)}`);
      setStatus("apps-status", t("account.apps.revoked", { name }));
      await loadApps();
      document.getElementById("apps-heading").focus();
    } catch (error) {
      reportFailure("apps", "account.apps.notRevoked", error);
    }
  });
}

// Logging out and deleting the account.

const LOGOUTS = {
  session: () => postJson("/api/me/logout", { scope: "session" }),
  account: () => postJson("/api/me/logout", { scope: "account" }),
  browser: () => postJson("/api/me/logout/all"),
};

function startLeaving() {
  for (const button of document.querySelectorAll("[data-logout]")) {
    button.addEventListener("click", () => {
      void act("logout", button, t("account.logout.working"), async () => {
        try {
          await LOGOUTS[button.dataset.logout]();
          await signedOut();
        } catch (error) {
          reportFailure("logout", "account.logout.failed", error);
        }
      });
    });
  }

  const form = document.getElementById("delete-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!form.elements.confirm.checked) {
      setStatus("delete-status", t("account.delete.mustConfirm"));
      form.elements.confirm.focus();
      return;
    }
    if (!window.confirm(t("account.delete.question"))) return;
    const button = form.querySelector('button[type="submit"]');
    void act("delete", button, t("account.delete.deleting"), async () => {
      try {
        await deleteJson("/api/me");
        await signedOut();
      } catch (error) {
        reportFailure("delete", "account.delete.failed", error);
      }
    });
  });
}

export async function start() {
  // Headings take the focus after an action removes the control that had it.
  for (const heading of document.querySelectorAll("main section h2")) heading.tabIndex = -1;
  startProfile();
  startIdentifiers();
  startPassword();
  startSessions();
  startLeaving();
  document.getElementById("another-account").addEventListener("click", () => {
    location.assign(signInUrl({ returnTo: PAGE, prompt: "login" }));
  });
  setStatus("view-status", t("account.loading"));
  const loaded = getJson("/api/me").then(showSnapshot, (error) => {
    reportFailure("profile", "account.notLoaded", error);
  });
  await Promise.all([
    loaded,
    loadSessions(),
    loadRemembered(),
    loadApps(),
    startMfa({ act, reportFailure, clearDetails }),
    startDeveloperApps(),
  ]);
  setStatus("view-status", "");
  // Back from signing in again for a section's action: that section's heading has the focus.
  document.getElementById(`${location.hash.slice(1)}-heading`)?.focus();
}
