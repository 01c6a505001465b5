"""What the system prompt costs before the conversation says a word (issue 33, "Measure it").

A real daemon (bench/_daemon.py) is configured with one model per base-prompt family (an
`anthropic` model, an `openai_responses` model, a local OpenAI-compatible model and the demo; no
provider is called), and a git repository with a few uncommitted files as the working directory.
For each model a conversation is created and `conversation/context` is asked for the trace of its
first request: the estimated tokens (about 4 characters per token, domain/usage.py) of the base
prompt, the environment block, the tool schemas of the default agent, and their sum, which every
request of the conversation carries. The environment block must stay under 300 tokens.

Run: ``python bench/prompt_tokens.py``
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon, RawClient

UNREACHABLE = "http://127.0.0.1:9"  # never called: the trace is computed by the daemon alone
CONFIG = f"""
[models.demo]
provider = "demo"

[models.claude]
provider = "anthropic"
model = "claude-sonnet-4-5"
base_url = "{UNREACHABLE}"
context_window = 200000

[models.gpt]
provider = "openai_responses"
model = "gpt-5"
base_url = "{UNREACHABLE}/v1"
context_window = 400000

[models.local]
provider = "openai"
model = "qwen2.5-coder:14b"
base_url = "{UNREACHABLE}/v1"
context_window = 32768

[agents.default]
description = "General assistant"
model = "demo"

[agents.explorer]
description = "Reads the code and answers questions about it, never edits"
model = "demo"
"""
MODELS = ("claude", "gpt", "local", "demo")


def _repository(root: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
            cwd=root,
            check=True,
            capture_output=True,
        )

    git("init", "-q", "-b", "main")
    (root / "README.md").write_text("bench\n")
    git("add", "-A")
    git("commit", "-q", "-m", "start")
    for n in range(12):  # more than the block lists
        (root / f"changed_{n}.py").write_text("x = 1\n")


async def _traces(daemon: BenchDaemon) -> list[tuple[str, dict[str, int]]]:
    client = await RawClient.connect(daemon.address, daemon.token)
    rows = []
    try:
        for model in MODELS:
            created = await client.request(
                "conversation/create", {"cwd": str(daemon.workdir), "model": model}
            )
            cid = created["conversation"]["conversationId"]
            trace = await client.request("conversation/context", {"conversationId": cid})
            tokens: dict[str, int] = {}
            for part in trace["parts"]:
                tokens[part["kind"]] = tokens.get(part["kind"], 0) + part["tokens"]
            label = next(p["label"] for p in trace["parts"] if p["kind"] == "base")
            rows.append((f"{model} — {label}", tokens))
    finally:
        await client.close()
    return rows


def main() -> None:
    daemon = BenchDaemon(CONFIG)
    _repository(daemon.workdir)
    with daemon.start():
        rows = asyncio.run(_traces(daemon))
    print("Estimated tokens every request carries (conversation/context, default agent):")
    print(f"{'model — base prompt':58} {'base':>6} {'env':>5} {'tools':>6} {'total':>6}")
    for name, t in rows:
        base, env, tools = t.get("base", 0), t.get("environment", 0), t.get("tools", 0)
        print(f"{name:58} {base:>6} {env:>5} {tools:>6} {base + env + tools:>6}")
        if env >= 300:
            print(f"  the environment block is over 300 tokens: {env}")


if __name__ == "__main__":
    main()
