/**
 * The Workers: connectivity, certification, capacity in use and cap, the encoders that work
 * and the hardware ones that failed their self-test (with the reason), current jobs, and
 * drain / undrain / disable (each confirmed first), live from worker and job events.
 */
import { errorMessage, getJson, postJson } from "./api.js";
import { debounce, el, formatPercent, formatTime, setStatus, showPage } from "./dom.js";
import { t } from "./i18n.js";
import { followEvents } from "./live.js";

const PAGE_SIZE = 25;

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
function conditionBadges(worker) {
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

export function start() {
  const body = document.querySelector("#workers-table tbody");
  const previous = document.querySelector('[data-page="previous"]');
  const next = document.querySelector('[data-page="next"]');
  const position = document.querySelector('[data-page="position"]');
  let offset = 0;

  const act = async (action, worker, button) => {
    if (!window.confirm(t(action.question, { worker: worker.name }))) return;
    button.disabled = true;
    try {
      await postJson(`/api/operations/workers/${worker.workerId}/${action.name}`);
      setStatus("action-result", t(action.done, { worker: worker.name }));
    } catch (error) {
      setStatus(
        "action-result",
        t("workers.actionRefused", { action: t(action.label), error: errorMessage(error) }),
      );
    }
    await load();
  };

  const row = (worker) => {
    const conditions = new Map(worker.conditions.map((condition) => [condition.type, condition.since]));
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
      el(
        "td",
        {},
        el(
          "ul",
          { class: "plain actions" },
          ...ACTIONS.map((action) => {
            const refusal = action.refusal(conditions);
            const reasonId = `reason-${action.name}-${worker.workerId}`;
            const button = el("button", {
              type: "button",
              class:
                action.name === "disable" ? "danger" : action.name === "undrain" ? "secondary" : undefined,
              "data-action": action.name,
              "aria-label": t("workers.actionOn", { action: t(action.label), worker: worker.name }),
              "aria-describedby": refusal === undefined ? undefined : reasonId,
              disabled: refusal !== undefined,
              text: t(action.label),
            });
            button.addEventListener("click", () => act(action, worker, button));
            return el(
              "li",
              {},
              button,
              refusal ? el("span", { id: reasonId, class: "reason", text: refusal }) : null,
            );
          }),
        ),
      ),
    );
  };

  const load = async () => {
    try {
      const list = await getJson(`/api/operations/workers?limit=${PAGE_SIZE}&offset=${offset}`);
      showPage(
        { body, position, previous, next },
        {
          rows: list.items.map(row),
          columns: 8,
          emptyText: t("workers.empty"),
          offset,
          pageSize: PAGE_SIZE,
          total: list.total,
          positionText: (rows) => t("workers.position", rows),
        },
      );
      setStatus("view-status", "");
    } catch (error) {
      setStatus("view-status", t("workers.loadFailed", { error: errorMessage(error) }));
    }
  };
  const reload = debounce(load, 500);

  previous.addEventListener("click", () => {
    offset = Math.max(0, offset - PAGE_SIZE);
    void load();
  });
  next.addEventListener("click", () => {
    offset += PAGE_SIZE;
    void load();
  });

  void load();
  followEvents({
    query: "?kinds=worker.registered,worker.updated,job.updated",
    refetch: reload,
    onEvent: reload,
  });
}
