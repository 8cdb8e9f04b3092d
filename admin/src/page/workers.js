/**
 * The Workers: connectivity, certification, capacity in use and cap, the encoders that work
 * and the hardware ones that failed their self-test (with the reason), current jobs, and
 * drain / undrain / disable (each confirmed first), live from worker and job events.
 */
import { errorMessage, getJson, postJson } from "./api.js";
import { debounce, el, formatPercent, formatTime, setStatus } from "./dom.js";
import { ids } from "./element-ids.js";
import { t } from "./i18n.js";
import { followEvents } from "./live.js";
import { Pager } from "./pager.js";

/** @typedef {import("@tjm/sdk").components["schemas"]["Worker"]} Worker */
/** @typedef {import("@tjm/sdk").components["schemas"]["WorkerList"]} WorkerList */
/** @typedef {Worker["conditions"][number]["type"]} Condition */

const PAGE_SIZE = 25;

/**
 * An operator's action on a Worker; `refusal` says why the Worker's conditions do not allow it.
 * @typedef {object} WorkerAction
 * @property {"drain" | "undrain" | "disable"} name
 * @property {import("./i18n.js").MessageKey} label
 * @property {import("./i18n.js").MessageKey} question
 * @property {import("./i18n.js").MessageKey} done
 * @property {(conditions: Set<Condition>) => string | undefined} refusal
 */

/** @type {WorkerAction[]} */
const ACTIONS = [
  {
    name: "drain",
    label: "workers.drain",
    question: "workers.drainQuestion",
    done: "workers.drainDone",
    refusal: (conditions) =>
      conditions.has("DISABLED")
        ? t("workers.drainDisabled")
        : conditions.has("DRAINING")
          ? t("workers.drainDraining")
          : undefined,
  },
  {
    name: "undrain",
    label: "workers.undrain",
    question: "workers.undrainQuestion",
    done: "workers.undrainDone",
    refusal: (conditions) =>
      conditions.has("DISABLED")
        ? t("workers.undrainDisabled")
        : conditions.has("DRAINING")
          ? undefined
          : t("workers.undrainNotDraining"),
  },
  {
    name: "disable",
    label: "workers.disable",
    question: "workers.disableQuestion",
    done: "workers.disableDone",
    refusal: (conditions) => (conditions.has("DISABLED") ? t("workers.disableDisabled") : undefined),
  },
];

/** @param {Worker} worker */
function capacityText(worker) {
  const inUse =
    worker.freeCapacity !== null
      ? worker.capacity - worker.freeCapacity
      : (worker.activeAttempts?.length ?? 0);
  const cap =
    worker.profile.capacityCap === null
      ? t("workers.noCap")
      : t("workers.cap", { cap: worker.profile.capacityCap });
  return t("workers.capacity", { inUse, capacity: worker.capacity, host: worker.profile.hostCapacity, cap });
}

/**
 * The software encoders plans use (protocol/src/encoders.ts: the cpu pool's video encoders
 * and the audio ones); a host lists a hundred more, shown on request.
 */
const PLAN_SOFTWARE_ENCODERS = new Set([
  "libx264",
  "libx265",
  "libsvtav1",
  "libvpx-vp9",
  "aac",
  "libopus",
  "libmp3lame",
]);

/**
 * What the Worker can encode with: the hardware encoders that passed their self-test and its
 * software encoders (bare names among its capabilities: decoders, filters and hwaccels carry a
 * prefix); then, apart, the hardware encoders that failed it and why.
 */
/** @param {Worker} worker */
function encoders(worker) {
  const hardware = new Set(worker.hardwareEncoders.map((encoder) => encoder.name));
  const software = worker.capabilities.filter((name) => !name.includes(":") && !hardware.has(name));
  const planned = software.filter((name) => PLAN_SOFTWARE_ENCODERS.has(name));
  const passed = worker.hardwareEncoders.filter((encoder) => encoder.status === "PASSED");
  const failed = worker.hardwareEncoders.filter((encoder) => encoder.status === "FAILED");
  const working = [...passed.map((encoder) => t("workers.hardware", { encoder: encoder.name })), ...planned];
  return el(
    "td",
    {},
    el(
      "p",
      { class: "encoders-working" },
      el("strong", { text: t("workers.working") }),
      working.join(", ") || t("workers.noEncoders"),
    ),
    software.length > planned.length
      ? el(
          "details",
          {},
          el("summary", { text: t("workers.allSoftware", { count: software.length }) }),
          el("p", { text: software.join(", ") }),
        )
      : null,
    failed.length === 0
      ? null
      : el(
          "div",
          { class: "encoders-failed" },
          el("strong", { text: t("workers.failedSelfTest") }),
          el(
            "ul",
            { class: "plain" },
            ...failed.map((encoder) =>
              el(
                "li",
                { class: "encoder-failed", "data-encoder": encoder.name },
                el("code", { text: encoder.name }),
                `: ${encoder.reason ?? t("workers.noReason")}`,
              ),
            ),
          ),
        ),
  );
}

/** DRAINING until it holds nothing, then DRAINED: one of the two, never both. */
/** @param {Worker} worker */
function conditionBadges(worker) {
  /** @type {Map<Condition, string>} */
  const since = new Map(worker.conditions.map((condition) => [condition.type, condition.since]));
  const badges = [];
  if (since.has("DRAINED")) {
    badges.push({
      type: "DRAINED",
      text: t("workers.drained", {
        since: formatTime(since.get("DRAINED")),
        asked: formatTime(since.get("DRAINING")),
      }),
    });
  } else if (since.has("DRAINING")) {
    badges.push({
      type: "DRAINING",
      text: t("workers.draining", { since: formatTime(since.get("DRAINING")) }),
    });
  }
  if (since.has("DISABLED"))
    badges.push({
      type: "DISABLED",
      text: t("workers.disabled", { since: formatTime(since.get("DISABLED")) }),
    });
  return badges.map((badge) =>
    el("span", { class: "condition", "data-condition": badge.type, text: badge.text }),
  );
}

/** @param {Worker} worker */
function currentJobs(worker) {
  if (worker.statistics.length > 0) {
    return el(
      "td",
      {},
      el(
        "ul",
        { class: "plain" },
        ...worker.statistics.map((stat) =>
          el(
            "li",
            {},
            el("a", {
              href: `/jobs/${stat.jobId}`,
              text: stat.jobId.slice(0, 8),
              "aria-label": t("workers.jobLink", { job: stat.jobId }),
            }),
            ` ${formatPercent(stat.percent)}`,
          ),
        ),
      ),
    );
  }
  const held = worker.activeAttempts?.length ?? 0;
  return el("td", { text: held === 0 ? t("workers.noJobs") : t("workers.attempts", { count: held }) });
}

/**
 * Drain, undrain and disable, each disabled with the reason when the Worker's conditions do not
 * allow it; `act` runs one.
 * @param {Worker} worker
 * @param {(action: WorkerAction, button: HTMLButtonElement) => void} act
 */
function actionList(worker, act) {
  const conditions = new Set(worker.conditions.map((condition) => condition.type));
  return el(
    "ul",
    { class: "plain actions" },
    ...ACTIONS.map((action) => {
      const refusal = action.refusal(conditions);
      const reasonId = `reason-${action.name}-${worker.workerId}`;
      const button = el("button", {
        type: "button",
        class: action.name === "disable" ? "danger" : action.name === "undrain" ? "secondary" : undefined,
        "data-action": action.name,
        "aria-label": t("workers.actionOn", { action: t(action.label), worker: worker.name }),
        "aria-describedby": refusal === undefined ? undefined : reasonId,
        disabled: refusal !== undefined,
        text: t(action.label),
      });
      button.addEventListener("click", () => act(action, button));
      return el(
        "li",
        {},
        button,
        refusal ? el("span", { id: reasonId, class: "reason", text: refusal }) : null,
      );
    }),
  );
}

/**
 * @param {Worker} worker
 * @param {(action: WorkerAction, button: HTMLButtonElement) => void} act
 */
function workerRow(worker, act) {
  return el(
    "tr",
    { "data-worker-id": worker.workerId },
    el(
      "th",
      { scope: "row" },
      worker.name,
      el("br"),
      el("small", { text: worker.workerId }),
      ...conditionBadges(worker),
    ),
    el("td", { text: worker.pool }),
    el("td", {
      text: t("workers.connectivity", {
        connectivity: worker.connectivity,
        since: formatTime(worker.connectivityChangedAt),
      }),
    }),
    el(
      "td",
      {},
      t("workers.certification", { status: worker.certification.status }),
      worker.certification.reasons.length > 0 ? `: ${worker.certification.reasons.join("; ")}` : "",
    ),
    el("td", { text: capacityText(worker) }),
    encoders(worker),
    currentJobs(worker),
    el("td", {}, actionList(worker, act)),
  );
}

export function start() {
  /**
   * An action's run on `worker`: asked first, then said how it went; the list is loaded again.
   * @param {Worker} worker
   * @returns {(action: WorkerAction, button: HTMLButtonElement) => Promise<void>}
   */
  const actOn = (worker) => async (action, button) => {
    if (!window.confirm(t(action.question, { worker: worker.name }))) return;
    button.disabled = true;
    try {
      await postJson(`/api/operations/workers/${worker.workerId}/${action.name}`);
      setStatus(ids.actionResult, t(action.done, { worker: worker.name }));
    } catch (error) {
      setStatus(
        ids.actionResult,
        t("workers.actionRefused", { action: t(action.label), error: errorMessage(error) }),
      );
    }
    await load();
  };

  const load = async () => {
    try {
      /** @type {WorkerList} */
      const list = await getJson(`/api/operations/workers?limit=${PAGE_SIZE}&offset=${pager.offset}`);
      pager.show(
        list.items.map((worker) => workerRow(worker, actOn(worker))),
        list.total,
      );
      setStatus(ids.viewStatus, "");
    } catch (error) {
      setStatus(ids.viewStatus, t("workers.loadFailed", { error: errorMessage(error) }));
    }
  };
  const pager = new Pager({
    tableId: ids.workersTable,
    pageSize: PAGE_SIZE,
    columns: 8,
    emptyText: t("workers.empty"),
    positionText: (rows) => t("workers.position", rows),
    load,
  });
  const reload = debounce(load, 500);

  void load();
  followEvents({
    query: "?kinds=worker.registered,worker.updated,job.updated",
    refetch: reload,
    onEvent: reload,
  });
}
