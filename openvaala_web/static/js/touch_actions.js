// A message's actions (Copy, Restart from here, Fork, Pin) on a touch screen: hidden until the
// message is tapped (or long-pressed), so a phone's transcript is not a wall of buttons. With a
// mouse they show on hover, and for the keyboard on focus (app.css).

const TOUCH = "(hover: none)";
const SHOWN = "actions-shown";
// A tap on these does its own thing, not show the actions.
const OWN_TAP = "a, button, input, textarea, select, summary, .item-actions";

/** @param {HTMLElement} root the transcript */
export function bindTouchActions(root) {
  const touch = window.matchMedia(TOUCH);
  const toggle = (event, { only = false } = {}) => {
    if (!touch.matches || event.target.closest(OWN_TAP)) return;
    const item = event.target.closest(".item");
    if (!item || !item.querySelector(".item-actions")) return;
    const selection = window.getSelection();
    if (selection && !selection.isCollapsed) return; // the user is selecting text
    if (only) event.preventDefault();
    const show = only || !item.classList.contains(SHOWN);
    for (const other of root.querySelectorAll(`.item.${SHOWN}`)) other.classList.remove(SHOWN);
    item.classList.toggle(SHOWN, show);
  };
  root.addEventListener("click", (event) => toggle(event));
  // A long press opens the context menu on a phone: show the actions instead.
  root.addEventListener("contextmenu", (event) => toggle(event, { only: true }));
}
