"""Every action as a `workspace/executeCommand` command, for editors without a plugin (and for
code lenses). Arguments are one object with the request's params, or positional values."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from pygls.lsp.server import LanguageServer

from openvaala_lsp.host import Host
from openvaala_lsp.params import from_arguments

# command → (action, positional argument names)
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "openvaala.listConversations": ("list_conversations", ("search",)),
    "openvaala.newConversation": ("new_conversation", ("cwd",)),
    "openvaala.send": ("send", ("conversationId", "text", "mode", "sessionId")),
    "openvaala.prompt": ("prompt", ("conversationId", "text", "mode", "sessionId")),
    "openvaala.input": ("input", ("action", "inputId", "text")),
    "openvaala.interrupt": ("interrupt", ("conversationId", "sessionId")),
    "openvaala.compact": ("compact", ("conversationId",)),
    "openvaala.fork": ("fork", ("conversationId", "upToItemId")),
    "openvaala.rewind": ("rewind", ("conversationId", "messageId", "restoreFiles", "force")),
    "openvaala.undo": ("undo", ("conversationId", "force")),
    "openvaala.tree": ("tree", ("conversationId",)),
    "openvaala.resume": ("resume", ("conversationId", "sessionId")),
    "openvaala.checkpoints": ("checkpoints", ("conversationId",)),
    "openvaala.export": ("export_bundle", ("conversationId", "path")),
    "openvaala.import": ("import_bundle", ("path", "cwd", "onConflict")),
    "openvaala.usage": ("usage", ("conversationId", "sessionId")),
    "openvaala.agents": ("agents", ("conversationId",)),
    "openvaala.subscribe": ("subscribe", ("conversationId",)),
    "openvaala.unsubscribe": ("unsubscribe", ("conversationId",)),
    "openvaala.render": ("render", ("uri",)),
    "openvaala.follow": ("follow", ("conversationId", "sessionId")),
    "openvaala.open": ("open", ("conversationId",)),
    "openvaala.approvals": ("approvals", ("conversationId",)),
    "openvaala.setAgent": ("set_agent", ("conversationId", "agent")),
    "openvaala.setCwd": ("set_cwd", ("conversationId", "cwd")),
    "openvaala.setPermissionMode": ("set_permission_mode", ("conversationId", "mode")),
    "openvaala.mcp": ("mcp_servers", ()),
    "openvaala.init": ("init", ("conversationId",)),
    "openvaala.remember": ("remember", ("conversationId", "text", "scope")),
    "openvaala.memory": ("memory", ("conversationId", "scope")),
    "openvaala.writeMemory": ("write_memory", ("conversationId", "scope", "text")),
    "openvaala.respondApproval": (
        "respond_approval",
        ("conversationId", "approvalId", "decision", "message"),
    ),
}
# As commands, these open the new conversation in the editor (and ask the user what they must).
SHOWS = {"fork", "rewind", "undo", "remember", "memory"}


def register(ls: Host) -> None:
    for name, (action, positional) in COMMANDS.items():
        _command(ls, name, action, positional)


def _command(ls: Host, name: str, action: str, positional: tuple[str, ...]) -> None:
    # pygls reads this handler's annotations at run time to convert the arguments: they must
    # resolve there, so the server is typed as the pygls base class it is.
    @ls.command(name)
    async def run(server: LanguageServer, *arguments: Any) -> Any:
        params = from_arguments(list(arguments), positional)
        actions = cast(Host, server).actions
        handler: Callable[..., Awaitable[Any]] = getattr(actions, action)
        if action in SHOWS:
            return await handler(params, show=True)
        return await handler(params)

    run.__name__ = f"command_{action}"
