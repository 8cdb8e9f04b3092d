/**
 * The account's own page: profile and avatar, e-mail and phone with the code step, password,
 * two-step sign-in, sessions, the accounts remembered in this browser, connected apps, developer
 * apps, logging out and deleting the account, all through the console's /api/me… (the console
 * holds the token, never the page). An action the Manager refuses for want of a recent sign-in
 * (403 auth.reauthentication_required) offers to sign in again with the max_age it names; the
 * sign-in comes back to the same section of this page.
 */

import { startDeveloperApps } from "./account-developer-apps.js";
import { IdentifiersSection } from "./account-identifiers.js";
import { startMfa } from "./account-mfa.js";
import { ProfileSection } from "./account-profile.js";
import { AccountLists } from "./account-sessions.js";
import { deleteJson, getJson, postJson, signOut } from "./api.js";
import { byId, control, setStatus, submitButton } from "./dom.js";
import { ids, sections, statusId } from "./element-ids.js";
import { t } from "./i18n.js";
import {
  act,
  clearDetails,
  failureReporter,
  focusableHeadings,
  focusReturnedSection,
  signInUrl,
} from "./sections.js";

/** @typedef {import("@tjm/sdk").components["schemas"]["AccountSnapshot"]} AccountSnapshot */

const PAGE = "/account";

/** A section's failure; a stale sign-in comes back to the section. */
const failed = failureReporter("account.reauth.needed", (section) => `${PAGE}#${section}`);

/** The console session ends with the provider's: its cookie goes, then the signed-out page. */
async function signedOut() {
  await signOut().catch(() => undefined);
  location.assign("/auth/signed-out");
}

/** @param {() => Promise<void>} sessionsChanged */
function startPassword(sessionsChanged) {
  const form = byId(ids.passwordForm, HTMLFormElement);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearDetails(form);
    void act(sections.password, submitButton(form), t("account.password.changing"), async () => {
      try {
        await postJson("/api/me/password", {
          current_password: control(form, "current_password", HTMLInputElement).value,
          new_password: control(form, "new_password", HTMLInputElement).value,
          revoke_other_sessions: control(form, "revoke_other_sessions", HTMLInputElement).checked,
        });
        form.reset();
        setStatus(statusId(sections.password), t("account.password.changed"));
        void sessionsChanged();
      } catch (error) {
        failed(sections.password, "account.password.notChanged", error, form);
      }
    });
  });
}

/** @type {Record<string, () => Promise<unknown>>} */
const LOGOUTS = {
  session: () => postJson("/api/me/logout", { scope: "session" }),
  account: () => postJson("/api/me/logout", { scope: "account" }),
  browser: () => postJson("/api/me/logout/all"),
};

/** Logging out (of this session, this account, or this browser) and deleting the account. */
function startLeaving() {
  for (const button of document.querySelectorAll("[data-logout]")) {
    if (!(button instanceof HTMLButtonElement)) continue;
    const logout = LOGOUTS[button.dataset.logout ?? ""];
    if (logout === undefined) continue;
    button.addEventListener("click", () => {
      void act(sections.logout, button, t("account.logout.working"), async () => {
        try {
          await logout();
          await signedOut();
        } catch (error) {
          failed(sections.logout, "account.logout.failed", error);
        }
      });
    });
  }

  const form = byId(ids.deleteForm, HTMLFormElement);
  const confirm = control(form, "confirm", HTMLInputElement);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!confirm.checked) {
      setStatus(statusId(sections.delete), t("account.delete.mustConfirm"));
      confirm.focus();
      return;
    }
    if (!window.confirm(t("account.delete.question"))) return;
    void act(sections.delete, submitButton(form), t("account.delete.deleting"), async () => {
      try {
        await deleteJson("/api/me");
        await signedOut();
      } catch (error) {
        failed(sections.delete, "account.delete.failed", error);
      }
    });
  });
}

export async function start() {
  focusableHeadings();
  const identifiers = new IdentifiersSection(failed);
  const lists = new AccountLists(failed);
  const profile = new ProfileSection(
    failed,
    (snapshot) =>
      identifiers.show({
        email: snapshot.email.address,
        emailVerified: snapshot.email.verified,
        phone: snapshot.phone?.number ?? null,
        phoneVerified: snapshot.phone?.verified ?? false,
      }),
    () => void lists.loadRemembered(),
  );
  startPassword(() => lists.loadSessions());
  startLeaving();
  byId(ids.anotherAccount, HTMLButtonElement).addEventListener("click", () => {
    location.assign(signInUrl({ returnTo: PAGE, prompt: "login" }));
  });
  setStatus(ids.viewStatus, t("account.loading"));
  /** @type {Promise<void>} */
  const loaded = getJson("/api/me").then(
    /** @param {AccountSnapshot} snapshot */
    (snapshot) => profile.show(snapshot),
    (error) => failed(sections.profile, "account.notLoaded", error),
  );
  await Promise.all([
    loaded,
    lists.loadSessions(),
    lists.loadRemembered(),
    lists.loadApps(),
    startMfa(failed),
    startDeveloperApps(failed),
  ]);
  setStatus(ids.viewStatus, "");
  focusReturnedSection();
}
