// Custom commands in the composer (docs/configuration.md, "Custom commands"): `/name args` is
// expanded by the daemon (commands/expand), the same files and the same code as the terminal's,
// and the expansion is sent as if typed. A message that only looks like a path (`/usr/bin is…`)
// is sent as it is.

const CALL = /^\/([A-Za-z0-9][A-Za-z0-9_-]*)(?:\s+([\s\S]*))?$/;

/** `{name, args}` when `text` is `/name args`, else null. */
export function customCall(text) {
  const match = CALL.exec(text.trim());
  return match ? { name: match[1].toLowerCase(), args: (match[2] || "").trim() } : null;
}

/**
 * The text to send for `text`: its expansion when it calls a custom command.
 * @param {string} text
 * @param {(method: string, params: object) => Promise<object | null>} call resolves null on failure (shown)
 * @returns {Promise<string | null>} null: nothing to send (the daemon refused; its error is shown)
 */
export async function expandCustom(text, conversationId, call) {
  const found = customCall(text);
  if (!found) return text;
  const result = await call("commands/expand", { conversationId, name: found.name, arguments: found.args });
  return result ? result.text : null;
}
