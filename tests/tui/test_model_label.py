"""The TUI's `/model` list says where a model's window came from when the file did not say it."""

from __future__ import annotations

from openvaala_tui.actions import model_label


def entry(source: str) -> dict[str, object]:
    return {
        "name": "m",
        "provider": "openai",
        "contextWindow": 40_960,
        "contextWindowSource": source,
    }


def test_a_window_written_in_the_file_needs_no_word() -> None:
    assert model_label(entry("config")) == "m  (openai, 40k context)"


def test_a_catalog_or_server_window_says_so() -> None:
    assert model_label(entry("catalog")).endswith("context from the catalog)")
    served = model_label(entry("server: Ollama /api/show at localhost:11434"))
    assert served.endswith("(server: Ollama /api/show at localhost:11434))")
