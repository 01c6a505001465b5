// Start by typing: with no conversation open the message box is ready, and the first message
// starts a conversation in the directory the start bar shows — the one the user picked, else the
// most recent conversation's, else the daemon user's home. "Change" opens the folder picker.

import { $ } from "./dom.js";
import { DirPicker } from "./dir_picker.js";

export class StartDir {
  /**
   * @param {(path: string) => Promise<object>} list directories/list
   * @param {() => string[]} recent the recent conversations' directories, newest first
   */
  constructor(list, recent) {
    this.list = list;
    this.recent = recent;
    this.home = "";
    this.chosen = "";
    this.bar = $("#start-bar");
    this.label = $("#start-dir");
    this.change = $("#start-change");
    this.picker = new DirPicker($("#dir-picker"), list, "start-picker");
    this.visible = false;
    this.change.addEventListener("click", () => this.pick());
  }

  get path() {
    return this.chosen || this.recent()[0] || this.home;
  }

  /** Learn the home (once online). */
  async load() {
    if (this.home) return;
    try {
      this.home = (await this.list("~")).path;
    } catch {
      return; // offline: asked again at the next connection
    }
    this.render();
  }

  show(visible) {
    this.visible = visible;
    if (!visible) this.picker.close();
    this.render();
  }

  render() {
    const path = this.path;
    this.bar.hidden = !this.visible || !path;
    this.label.textContent = path;
  }

  pick() {
    this.change.setAttribute("aria-expanded", "true");
    this.picker.open(this.path, {
      recent: this.recent().slice(0, 5),
      onChoose: (path) => {
        this.chosen = path;
        this.render();
        $("#composer-text").focus();
      },
      onClose: () => {
        this.change.setAttribute("aria-expanded", "false");
        if (this.picker.el.contains(document.activeElement) || document.activeElement === document.body) this.change.focus();
      },
    });
  }
}
