/**
 * The console page's entry module. Plain modern JavaScript served as it is (no build step, no
 * framework): the server renders each view's static HTML, and this module loads the one view
 * module named by <body data-view>, which fetches `/api/operations/*` and follows `/api/events`.
 */
import { errorMessage, signOut } from "./api.js";
import { setStatus } from "./dom.js";
import { ids } from "./element-ids.js";
import { t } from "./i18n.js";

/**
 * A view's module: `start` gets <body>'s data-* attributes (the job's id, the plan's enums …).
 * @typedef {{ start: (data: DOMStringMap) => unknown }} ViewModule
 */

/** @type {Record<string, () => Promise<ViewModule>>} */
const VIEWS = {
  jobs: () => import("./jobs.js"),
  job: () => import("./job-detail.js"),
  submit: () => import("./submit.js"),
  workers: () => import("./workers.js"),
  enrollment: () => import("./enrollment.js"),
  clients: () => import("./clients.js"),
  account: () => import("./account.js"),
};

const signOutButton = document.getElementById(ids.signOut);
if (signOutButton instanceof HTMLButtonElement) {
  signOutButton.addEventListener("click", async () => {
    signOutButton.disabled = true;
    try {
      // The provider ends its own session there and sends the browser back to /auth/signed-out.
      const { logoutUrl } = await signOut();
      location.assign(logoutUrl);
    } catch (error) {
      signOutButton.disabled = false;
      setStatus(ids.liveNotice, t("common.signOutFailed", { error: errorMessage(error) }));
    }
  });
}

const view = document.body.dataset.view;
const load = view === undefined ? undefined : VIEWS[view];
if (load) (await load()).start(document.body.dataset);
