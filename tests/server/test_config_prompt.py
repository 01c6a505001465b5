"""The prompt settings are read like every other (config_prompt.py): a typo or a bad value is an
error naming the key; a `base_instructions` file is read when the configuration loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from openvaala_server.config import ConfigError, load_config

AGENT = "[agents.a]\ndescription = 'x'\n"


def _error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    return str(err.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (AGENT + "base_instruction = false\n", "agents.a.base_instruction: unknown key"),
        (AGENT + "base_instructions = 3\n", "must be true, false or the path of a text file"),
        (AGENT + "base_instructions = 'none.md'\n", "agents.a.base_instructions: cannot read"),
        ("project_doc_names = ['docs/AGENTS.md']\n", "project_doc_names: 'docs/AGENTS.md' is not"),
        ("project_doc_names = 'AGENTS.md'\n", "project_doc_names: must be a list of file names"),
        ("project_doc_max_chars = -1\n", "project_doc_max_chars: must be at least 0"),
        ("project_doc_max_char = 10\n", "did you mean `project_doc_max_chars`"),
    ],
)
def test_a_bad_prompt_setting_names_its_key(tmp_path: Path, text: str, says: str) -> None:
    assert says in _error(tmp_path, text)


def test_a_base_instructions_file_is_read_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "prompt.md").write_text("  Be a careful reviewer.\n")
    path = tmp_path / "config.toml"
    path.write_text(
        "project_doc_names = ['AGENTS.md', 'CLAUDE.md']\nproject_doc_max_chars = 0\n"
        + AGENT
        + "base_instructions = 'prompt.md'\n[agents.b]\nbase_instructions = false\n"
    )
    config = load_config(path)
    assert config.agents["a"].base_instructions.text == "Be a careful reviewer."
    assert config.agents["a"].base_instructions.source == str(tmp_path / "prompt.md")
    assert config.agents["b"].base_instructions.text == ""
    assert config.project_docs.names == ("AGENTS.md", "CLAUDE.md")
    assert config.project_docs.max_chars == 0
