"""A project's custom command file that links out of the project is not a command: the daemon
never reads a file elsewhere (a key, its token) into a message (docs/configuration.md)."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.custom_commands import directories, load


def test_a_project_command_linking_out_of_the_project_is_ignored(tmp_path: Path) -> None:
    secret = tmp_path / "home" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("sk-very-secret\n")
    project = tmp_path / "repo"
    commands = project / ".openvaala" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").symlink_to(secret)
    (commands / "shared.md").symlink_to(project / "prompts.md")
    (project / "prompts.md").write_text("Review $ARGUMENTS.\n")
    user = tmp_path / "config" / "commands"
    user.mkdir(parents=True)
    (user / "mine.md").symlink_to(secret)  # the user's own directory is theirs to link

    found = load(directories(user, str(project)))
    assert "review" not in found
    assert found["shared"].expand("x") == "Review x."
    assert "mine" in found
