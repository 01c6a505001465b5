// MCP resources and prompts in the chat panel's composer (docs/editors.md, "The chat panel"): the
// web UI's own picker (mcp_picker.js, copied in by scripts/copy-web.js), so the panel and the
// browser offer them one way. "Resources" lists each ready server's resources and puts
// `@SERVER:URI` in the message; typing "/" offers the ready servers' prompts as
// `/mcp__SERVER__PROMPT name=value …`. On send, `expand` turns either into the message the
// daemon gets. The picker asks the daemon's methods; the panel reaches them through the bridge
// (openvaala/mcp/*), and follows each server's state through `$/openvaala/mcpStatus`.
import { McpPicker } from "./web/js/mcp_picker.js";

// The daemon's methods the picker asks for, and the bridge requests that pass them through.
const BRIDGE = {
  "mcp/list": "openvaala/mcp/list",
  "mcp/readResource": "openvaala/mcp/readResource",
  "mcp/getPrompt": "openvaala/mcp/getPrompt",
};

/**
 * @param {HTMLElement} composer the composer (its `.composer-row` gets the "Resources" button)
 * @param {HTMLTextAreaElement} text its text box
 * @param {(method: string, params: object) => Promise<any>} call a bridge request
 */
export function mcpPicker(composer, text, call) {
  return new McpPicker(composer, text, (method, params) => {
    const bridged = BRIDGE[method];
    if (!bridged) return Promise.reject(new Error(`the chat panel cannot ask for ${method}`));
    return call(bridged, params);
  });
}
