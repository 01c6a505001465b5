// The machine the page is attached to: the daemon's host name from `initialize`
// (serverInfo.machine, docs/protocol.md), so a browser on another machine than the daemon's
// (`openvaala web --remote`, docs/remote.md) says where its agents run.

import { $ } from "./dom.js";

export function showMachine(init) {
  const machine = init && init.serverInfo && init.serverInfo.machine;
  const label = $("#machine");
  if (typeof machine !== "string" || !machine) {
    label.hidden = true;
    return;
  }
  label.textContent = `on ${machine}`;
  label.title = `The daemon runs on ${machine}`;
  label.hidden = false;
}
