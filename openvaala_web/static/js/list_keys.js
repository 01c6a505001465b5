// The conversation list as one stop in the Tab order (the WAI-ARIA grid pattern): rows of cells
// (the conversation's button; a fork's link to its origin), one of them focusable at a time
// (a roving tabindex). Up/Down move between rows, Left/Right between a row's cells, Home/End
// and PageUp/PageDown jump; Tab leaves the list. Enter or Space opens (the cells are buttons
// and links).

const PAGE_ROWS = 10;

/**
 * @param {HTMLElement} grid the role="grid" element
 * @param {{onEdge?: (direction: number) => void}} [hooks] the focus went past the rows drawn
 */
export class GridKeys {
  constructor(grid, hooks = {}) {
    this.grid = grid;
    this.hooks = hooks;
    this.activeKey = null; // data-key of the row holding the tab stop
    this.column = 0;
    grid.addEventListener("keydown", (event) => this.onKey(event));
    grid.addEventListener("focusin", (event) => {
      const row = event.target.closest("[role='row']");
      if (!row) return;
      this.activeKey = row.dataset.key || null;
      this.column = Math.max(0, this.cells(row).indexOf(event.target));
      this.rove();
    });
  }

  rows() {
    return [...this.grid.querySelectorAll("[role='row']:not([aria-hidden='true'])")];
  }

  /** The focusable elements of a row, in order. */
  cells(row) {
    return [...row.querySelectorAll("button, a[href]")];
  }

  /** Exactly one focusable element in the grid: the active row's (else the first row's). */
  rove(preferKey = null) {
    const rows = this.rows();
    const key = this.activeKey || preferKey;
    const active = rows.find((r) => key && r.dataset.key === key) || rows[0];
    for (const row of rows) {
      const cells = this.cells(row);
      cells.forEach((cell, i) => {
        cell.tabIndex = row === active && i === Math.min(this.column, cells.length - 1) ? 0 : -1;
      });
    }
  }

  onKey(event) {
    const rows = this.rows();
    const row = event.target.closest("[role='row']");
    const index = rows.indexOf(row);
    if (index < 0) return;
    const cells = this.cells(row);
    let next = index;
    let column = Math.max(0, cells.indexOf(event.target));
    switch (event.key) {
      case "ArrowDown": next = index + 1; break;
      case "ArrowUp": next = index - 1; break;
      case "PageDown": next = index + PAGE_ROWS; break;
      case "PageUp": next = index - PAGE_ROWS; break;
      case "Home": next = 0; break;
      case "End": next = rows.length - 1; break;
      case "ArrowRight": column = Math.min(cells.length - 1, column + 1); break;
      case "ArrowLeft": column = Math.max(0, column - 1); break;
      default: return;
    }
    event.preventDefault();
    let list = rows;
    if ((next >= rows.length || next < 0) && this.hooks.onEdge) {
      this.hooks.onEdge(next < 0 ? -1 : 1);
      // The rows may have been drawn again (a window moved): count from this row anew.
      list = this.rows();
      const at = list.findIndex((r) => r.dataset.key === row.dataset.key);
      if (at >= 0) next = at + (next - index);
    }
    next = Math.max(0, Math.min(list.length - 1, next));
    this.focusRow(list[next], column);
  }

  focusRow(row, column = this.column) {
    const cells = this.cells(row);
    if (!cells.length) return;
    this.column = column;
    const cell = cells[Math.min(column, cells.length - 1)];
    this.activeKey = row.dataset.key || null;
    this.rove();
    cell.focus();
    row.scrollIntoView({ block: "nearest" });
  }
}
