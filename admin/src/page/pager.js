/**
 * The pager of a list view (the jobs, the Workers, the clients): the buttons and position line
 * views.ts writes under the table, and the offset of the page shown. The view loads a page of
 * `pageSize` from `offset` and hands its rows to `show`; the buttons move the offset and call
 * the view's `load`.
 */
import { byId, el, tableBody } from "./dom.js";
import { ids } from "./element-ids.js";

/**
 * @typedef {object} PagerOptions
 * @property {string} tableId the table whose body shows the page
 * @property {number} pageSize
 * @property {number} columns the table's columns: the empty row spans them
 * @property {string} emptyText
 * @property {(rows: { first: number, last: number, total: number }) => string} positionText
 * @property {() => unknown} load shows the page at `offset`
 * @property {number} [offset] the first page's (from the address, say)
 */

export class Pager {
  #body;
  #position = byId(ids.pagerPosition, HTMLElement);
  #previous = byId(ids.pagerPrevious, HTMLButtonElement);
  #next = byId(ids.pagerNext, HTMLButtonElement);
  #options;

  /** @param {PagerOptions} options */
  constructor(options) {
    this.#options = options;
    this.#body = tableBody(options.tableId);
    this.offset = Math.max(0, options.offset ?? 0);
    this.#previous.addEventListener("click", () => {
      this.offset = Math.max(0, this.offset - options.pageSize);
      void options.load();
    });
    this.#next.addEventListener("click", () => {
      this.offset += options.pageSize;
      void options.load();
    });
  }

  /** Back to the first page (the filters changed) and loads it. */
  restart() {
    this.offset = 0;
    void this.#options.load();
  }

  /**
   * One page: its rows in the table body (or the empty row), which rows of how many in the
   * position line, and the buttons enabled where there is a page to go to.
   * @param {HTMLTableRowElement[]} rows
   * @param {number} total
   */
  show(rows, total) {
    const { columns, emptyText, pageSize, positionText } = this.#options;
    this.#body.replaceChildren(...rows);
    if (rows.length === 0) this.#body.append(el("tr", {}, el("td", { colspan: columns, text: emptyText })));
    this.#position.textContent = positionText({
      first: rows.length === 0 ? 0 : this.offset + 1,
      last: this.offset + rows.length,
      total,
    });
    this.#previous.disabled = this.offset === 0;
    this.#next.disabled = this.offset + pageSize >= total;
  }
}
