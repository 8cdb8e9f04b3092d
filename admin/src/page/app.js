/**
 * The console page's entry module. Plain modern JavaScript served as it is (no build step, no
 * framework): the server renders each view's static HTML, and this module loads the one view
 * module named by <body data-view>, which fetches `/api/operations/*` and follows `/api/events`.
 */
import { errorMessage, signOut } from "./api.js";
import { setStatus } from "./dom.js";
import { t } from "./i18n.js";

const VIEWS = {
  jobs: () => import("./jobs.js"),
  job: () => import("./job-detail.js"),
  submit: () => import("./submit.js"),
  workers: () => import("./workers.js"),
  enrollment: () => import("./enrollment.js"),
  clients: () => import("./clients.js"),
  account: () => import("./account.js"),
};

const signOutButton = document.getElementById("sign-out");
signOutButton?.addEventListener("click", async () => {
  signOutButton.disabled = true;
  try {
    // The provider ends its own session there and sends the browser back to /auth/signed-out.
    const { logoutUrl } = await signOut();
    location.assign(logoutUrl);
  } catch (error) {
    signOutButton.disabled = false;
    setStatus("live-notice", t("common.signOutFailed", { error: errorMessage(error) }));
  }
});

const load = VIEWS[document.body.dataset.view];
if (load) (await load()).start(document.body.dataset);
