"""`openvaala exec`: the real command against a real daemon, the model faked at the wire.

One daemon for the module (started by the first `exec` itself, as on a user's machine); each
test scripts the fake provider's replies and reads stdout, stderr and the exit status.
"""

from __future__ import annotations

import base64
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.exec import (
    EXIT_APPROVAL,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
)
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, HttpError, Reply
from tests.fakes.wire import CHAT
from tests.support.daemon import Daemon, make_daemon, stop_any_server


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(wire=CHAT) as fake:
        yield fake


@pytest.fixture(scope="module")
def home(fake: FakeProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    config = (
        fake.config_toml("fake")
        + fake.config_toml("seeing", vision=True)
        + '\n[agents.default]\ndescription = "test"\nmodel = "fake"\ninstructions = "ROLE: root"\n'
        + '\n[agents.worker]\ndescription = "helps"\nmodel = "fake"\n'
        + 'instructions = "ROLE: worker"\n'
        + '\n[agents.careful]\ndescription = "asks first"\nmodel = "fake"\napproval = "always"\n'
        + "\n[retry]\nmax_retries = 0\n"
    )
    d = make_daemon(tmp_path_factory.mktemp("exec"), config)  # not started: exec starts it
    yield d
    stop_any_server(d)


@pytest.fixture(autouse=True)
def _fresh(fake: FakeProvider) -> None:
    fake.reset()


def env_of(d: Daemon, fake: FakeProvider) -> dict[str, str]:
    return {**d.env, **fake.env}


def run_exec(
    d: Daemon, fake: FakeProvider, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openvaala_server", "exec", *args],
        env=env_of(d, fake),
        cwd=d.workdir,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def user_texts(fake: FakeProvider) -> list[str]:
    messages = fake.last_request.json["messages"]
    return [str(m["content"]) for m in messages if m["role"] == "user"]


def test_the_reply_goes_to_stdout_and_the_daemon_is_started(
    home: Daemon, fake: FakeProvider
) -> None:
    fake.enqueue(Reply().text("Hello ", "from the ", "model."))
    done = run_exec(home, fake, "say hello")
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout == "Hello from the model.\n"  # the answer alone: diagnostics on stderr
    assert "openvaala exec --resume" in done.stderr
    assert user_texts(fake) == ["say hello"]


def test_the_prompt_from_stdin_and_stdin_after_a_prompt(home: Daemon, fake: FakeProvider) -> None:
    fake.enqueue(Reply().text("one"), Reply().text("two"))
    done = run_exec(home, fake, stdin="piped question\n")
    assert done.returncode == EXIT_OK, done.stderr
    assert user_texts(fake)[-1].strip() == "piped question"
    done = run_exec(home, fake, "review this", stdin="diff --git a b\n")
    assert done.returncode == EXIT_OK, done.stderr
    assert user_texts(fake)[-1] == "review this\n\ndiff --git a b\n"


def test_the_reply_is_printed_while_it_streams(home: Daemon, fake: FakeProvider) -> None:
    gate = Gate()
    fake.enqueue(Reply().text("first part, ").wait(gate).text("then the rest"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "openvaala_server", "exec", "stream please"],
        env=env_of(home, fake),
        cwd=home.workdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        seen = b""
        deadline = time.monotonic() + 30
        while b"first part" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                seen += os.read(proc.stdout.fileno(), 4096)
        assert b"first part" in seen and not gate.is_open  # shown before the reply ended
        gate.open()
        out, _err = proc.communicate(timeout=30)
        assert (seen + out).decode() == "first part, then the rest\n"
        assert proc.returncode == EXIT_OK
    finally:
        gate.open()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_json_prints_every_event_as_a_line(home: Daemon, fake: FakeProvider) -> None:
    fake.enqueue(Reply().text("Hi ", "there"))
    done = run_exec(home, fake, "--json", "hello")
    assert done.returncode == EXIT_OK, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    methods = [e["method"] for e in events]
    assert "turn/started" in methods and "item/delta" in methods
    ended = [e for e in events if e["method"] == "turn/ended"]
    assert ended[-1]["params"]["status"] == "completed"
    deltas = "".join(e["params"]["delta"] for e in events if e["method"] == "item/delta")
    assert deltas == "Hi there"
    assert events[-1] == {
        "method": "exec/ended",
        "params": {"conversationId": ended[-1]["params"]["conversationId"], "exitCode": 0},
    }


def test_a_failed_turn_exits_1_and_says_why(home: Daemon, fake: FakeProvider) -> None:
    fake.enqueue(Reply(error=HttpError(400, "the request was malformed")))
    done = run_exec(home, fake, "this will fail")
    assert done.returncode == EXIT_FAILED
    assert "the turn failed" in done.stderr and "malformed" in done.stderr
    assert done.stdout == ""


def test_continue_and_resume_go_on_with_a_conversation(home: Daemon, fake: FakeProvider) -> None:
    fake.enqueue(Reply().text("noted"), Reply().text("it was 42"), Reply().text("again 42"))
    first = run_exec(home, fake, "remember 42")
    assert first.returncode == EXIT_OK, first.stderr
    cid = first.stderr.split("--resume ")[1].split()[0]
    again = run_exec(home, fake, "--continue", "what was it?")
    assert again.returncode == EXIT_OK, again.stderr
    assert user_texts(fake) == ["remember 42", "what was it?"]
    resumed = run_exec(home, fake, "--resume", cid, "and now?")
    assert resumed.returncode == EXIT_OK, resumed.stderr
    assert user_texts(fake) == ["remember 42", "what was it?", "and now?"]


def test_bad_arguments_exit_2_naming_the_option(home: Daemon, fake: FakeProvider) -> None:
    done = run_exec(home, fake, "--resume", "0" * 32, "hello")
    assert done.returncode == EXIT_USAGE and "no conversation 000" in done.stderr
    done = run_exec(home, fake, "--model", "nope", "hello")
    assert done.returncode == EXIT_USAGE and "--model" in done.stderr
    assert "conversation/" not in done.stderr  # a user reads options, not protocol methods
    done = run_exec(home, fake, "--agent", "nobody", "hello")
    assert done.returncode == EXIT_USAGE and "nobody" in done.stderr
    done = run_exec(home, fake, "--cwd", str(home.workdir / "missing"), "hello")
    assert done.returncode == EXIT_USAGE and "does not exist" in done.stderr
    done = run_exec(home, fake, "--allow", "shell(rm *; ls)", "hello")
    assert done.returncode == EXIT_USAGE and "control operator" in done.stderr
    done = run_exec(home, fake)  # no prompt, stdin empty
    assert done.returncode == EXIT_USAGE and "prompt" in done.stderr
    assert fake.requests == []


def test_an_approval_fails_the_call_unless_allowed(home: Daemon, fake: FakeProvider) -> None:
    marker = home.workdir / "made-by-exec"
    call = Reply().tool_call("shell", {"command": f"touch {marker.name}"})
    fake.enqueue(call)
    refused = run_exec(home, fake, "--agent", "careful", "make the file")
    assert refused.returncode == EXIT_APPROVAL, refused.stderr
    assert f"touch {marker.name}" in refused.stderr and "--allow" in refused.stderr
    assert not marker.exists()

    fake.enqueue(
        Reply().tool_call("shell", {"command": f"touch {marker.name}"}), Reply().text("made it")
    )
    allowed = run_exec(
        home, fake, "--agent", "careful", "--allow", "shell(touch made-*)", "make it"
    )
    assert allowed.returncode == EXIT_OK, allowed.stderr
    assert marker.exists() and allowed.stdout == "made it\n"

    # A rule for another command does not answer this one.
    fake.enqueue(Reply().tool_call("shell", {"command": "touch other"}))
    other = run_exec(home, fake, "--agent", "careful", "--allow", "shell(touch made-*)", "x")
    assert other.returncode == EXIT_APPROVAL
    assert not (home.workdir / "other").exists()


def test_ctrl_c_interrupts_the_turn_and_exits_130(home: Daemon, fake: FakeProvider) -> None:
    gate = Gate()
    fake.enqueue(Reply().text("working").wait(gate).text(" never shown"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "openvaala_server", "exec", "a long job"],
        env=env_of(home, fake),
        cwd=home.workdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not gate.reached and time.monotonic() < deadline:
            time.sleep(0.02)
        assert gate.reached
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == EXIT_INTERRUPTED, err
        assert "interrupted" in err and "never shown" not in out
    finally:
        gate.open()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # The daemon kept the conversation: the interrupted turn is over, the next one runs.
    fake.enqueue(Reply().text("after"))
    done = run_exec(home, fake, "--continue", "go on")
    assert done.returncode == EXIT_OK and done.stdout == "after\n"


def test_exec_help_documents_the_exit_codes(home: Daemon) -> None:
    done = home.cli("exec", "--help")
    assert done.returncode == 0
    for code in ("0", "1", "2", "3", "4", "130"):
        assert code in done.stdout
    assert Path(home.workdir).is_dir()


def role_is(who: str, *, with_text: str | None = None, without: str | None = None) -> Any:
    """A request of the agent whose instructions start with `ROLE: who`."""

    def match(req: Any) -> bool:
        messages = req.json["messages"]
        system = " ".join(str(m["content"]) for m in messages if m["role"] == "system")
        users = " ".join(str(m["content"]) for m in messages if m["role"] == "user")
        return (
            f"ROLE: {who}" in system
            and (with_text is None or with_text in users)
            and (without is None or without not in users)
        )

    return match


def test_a_subagents_report_is_awaited_and_its_answer_printed(
    home: Daemon, fake: FakeProvider
) -> None:
    report = "Report from subagent"
    fake.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "TASK-X count"}),
        Reply().text("I started a helper."),
        when=role_is("root", without=report),
    )
    fake.enqueue(Reply().text("SUB-RESULT 42"), when=role_is("worker"))
    fake.enqueue(Reply().text("The helper found 42."), when=role_is("root", with_text=report))
    done = run_exec(home, fake, "count with a helper")
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout == "I started a helper.\n\nThe helper found 42.\n"


def test_a_subagents_approval_fails_the_call_and_stops_the_subagent(
    home: Daemon, fake: FakeProvider
) -> None:
    marker = home.workdir / "sub-made"
    fake.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "careful", "task": "TASK-Y make it"}),
        Reply().text("I started a careful helper."),
        when=role_is("root"),
    )
    fake.enqueue(
        Reply().tool_call("shell", {"command": f"touch {marker.name}"}),
        when=lambda req: "TASK-Y" in str(req.json["messages"]),
    )
    stopped = "Its turn ended: interrupted"
    fake.enqueue(Reply().text("The helper was stopped."), when=role_is("root", with_text=stopped))
    done = run_exec(home, fake, "get it made")
    assert done.returncode == EXIT_APPROVAL, done.stderr
    assert f"touch {marker.name}" in done.stderr
    assert not marker.exists()
    # The root goes on after exec has exited: the spawn's result, and its stopped helper's
    # report (in the same model call or the next). The call that carries the report is its last:
    # waited for, so that no call of this conversation takes a reply a later test scripts.
    reported = role_is("root", with_text=stopped)
    count = 1
    while not reported(fake.wait_for_request_sync(count)):
        count += 1


# A 1×1 PNG (68 bytes) and a tiny GIF.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR42mNgYAAAAAMAAWgmWQ0AAAAASUVORK5CYII="
)
GIF = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"


def test_images_go_with_the_prompt(home: Daemon, fake: FakeProvider) -> None:
    (home.workdir / "dot.png").write_bytes(PNG)
    (home.workdir / "tiny.gif").write_bytes(GIF)
    fake.enqueue(Reply().text("a dot and a gif"))
    done = run_exec(
        home, fake, "--model", "seeing", "--image", "dot.png", "--image", "tiny.gif", "what?"
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout == "a dot and a gif\n"
    content = fake.last_request.json["messages"][-1]["content"]
    assert [part["type"] for part in content] == ["text", "image_url", "image_url"]
    assert content[0]["text"] == "what?"
    png_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert content[1]["image_url"]["url"] == png_url
    assert content[2]["image_url"]["url"].startswith("data:image/gif;base64,")


def test_a_bad_image_exits_2_before_anything_is_sent(home: Daemon, fake: FakeProvider) -> None:
    (home.workdir / "notes.txt").write_text("words, not pixels")
    (home.workdir / "huge.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(6 * 1024 * 1024))
    (home.workdir / "dot.png").write_bytes(PNG)
    conversations = home.home / "conversations"
    before = sorted(conversations.iterdir()) if conversations.exists() else []
    cases = [
        (["--image", "missing.png"], "missing.png could not be read"),
        (["--image", "notes.txt"], "notes.txt is not a PNG"),
        (["--image", "huge.png"], "huge.png is"),
        (["--image", "huge.png"], "at most 5242880 bytes (5 MiB)"),
        (["--image", "dot.png"] * 5, "at most 4"),
    ]
    for args, message in cases:
        done = run_exec(home, fake, *args, "look")
        assert done.returncode == EXIT_USAGE, (args, done.stderr)
        assert "--image" in done.stderr and message in done.stderr, done.stderr
        assert done.stdout == ""
    assert fake.requests == []
    after = sorted(conversations.iterdir()) if conversations.exists() else []
    assert after == before  # no conversation was made for a refused call
