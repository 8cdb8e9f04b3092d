/** The jobs list: state and pool filters, pages of 20, live states and progress bars. */
import { errorMessage, getJson } from "./api.js";
import { debounce, el, formatPercent, formatTime, progressView, setStatus, showPage } from "./dom.js";
import { t } from "./i18n.js";
import { followEvents } from "./live.js";

const PAGE_SIZE = 20;

export function start() {
  const form = document.getElementById("job-filters");
  const body = document.querySelector("#jobs-table tbody");
  const previous = document.querySelector('[data-page="previous"]');
  const next = document.querySelector('[data-page="next"]');
  const position = document.querySelector('[data-page="position"]');
  const url = new URLSearchParams(location.search);
  form.elements.state.value = url.get("state") ?? "";
  form.elements.workerPool.value = url.get("workerPool") ?? "";
  let offset = Math.max(0, Number(url.get("offset")) || 0);
  let total = 0;
  /** The latest job.progress of each job: a refetch keeps showing fps, speed and ETA. */
  const progressByJob = new Map();
  const progressCells = new Map();

  const filters = () => {
    const query = new URLSearchParams();
    if (form.elements.state.value) query.set("state", form.elements.state.value);
    if (form.elements.workerPool.value) query.set("workerPool", form.elements.workerPool.value);
    return query;
  };

  /**
   * Running jobs' progress bars, which job.progress events update in place; other jobs show
   * the figure the job's page shows (100 % once completed).
   */
  const progressCell = (job) => {
    if (job.state !== "RUNNING" && job.state !== "CANCEL_REQUESTED")
      return el("td", { text: formatPercent(job.currentAttempt.progress) });
    const event = progressByJob.get(job.id);
    // An event of an earlier attempt (before a retry) says nothing about this one.
    const live =
      event?.attemptId === job.currentAttemptId ? event : { percent: job.currentAttempt.progress ?? 0 };
    const cell = el("td", {}, progressView(live, t("jobs.progressOf", { job: job.id.slice(0, 8) })));
    progressCells.set(job.id, cell);
    return cell;
  };

  const render = (list) => {
    total = list.total;
    progressCells.clear();
    showPage(
      { body, position, previous, next },
      {
        rows: list.items.map((job) =>
          el(
            "tr",
            { "data-job-id": job.id },
            el(
              "td",
              {},
              el("a", {
                href: `/jobs/${job.id}`,
                text: job.id.slice(0, 8),
                "aria-label": t("jobs.jobLink", { job: job.id }),
              }),
            ),
            el(
              "td",
              {},
              el("span", {
                class: `state state-${job.state}`,
                text: t("common.jobState", { state: job.state }),
              }),
            ),
            el("td", { text: job.workerPool }),
            el("td", { text: job.priority }),
            progressCell(job),
            el("td", { text: formatTime(job.createdAt) }),
          ),
        ),
        columns: 6,
        emptyText: t("jobs.empty"),
        offset,
        pageSize: PAGE_SIZE,
        total,
        positionText: (rows) => t("jobs.position", rows),
      },
    );
  };

  const load = async () => {
    const query = filters();
    if (offset > 0) query.set("offset", String(offset));
    history.replaceState(null, "", query.size > 0 ? `?${query}` : location.pathname);
    query.set("limit", String(PAGE_SIZE));
    query.set("offset", String(offset));
    try {
      render(await getJson(`/api/operations/jobs?${query}`));
      setStatus("view-status", "");
    } catch (error) {
      setStatus("view-status", t("jobs.loadFailed", { error: errorMessage(error) }));
    }
  };
  const reload = debounce(load, 250);

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    offset = 0;
    void load();
  });
  form.addEventListener("change", () => {
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

  void load();
  followEvents({
    query: "?kinds=job.created,job.updated,job.progress",
    refetch: reload,
    onEvent: (event) => {
      if (event.kind !== "job.progress") return reload();
      progressByJob.set(event.data.jobId, event.data);
      progressCells
        .get(event.data.jobId)
        ?.replaceChildren(
          progressView(event.data, t("jobs.progressOf", { job: event.data.jobId.slice(0, 8) })),
        );
    },
  });
}
