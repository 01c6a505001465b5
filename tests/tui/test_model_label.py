"""The TUI's `/model` list says where a model's window came from when the file did not say it."""

from __future__ import annotations

from typing import Any

from openvaala_tui.actions import model_label


def entry(source: str) -> Any:  # a ModelInfo as far as the label reads it
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


def test_the_context_view_says_where_an_unwritten_window_came_from() -> None:
    from openvaala_tui.context_format import trace_text

    def view(source: str) -> str:
        trace: Any = {"parts": [], "total": 0, "omitted": [], "windowSource": source}
        return trace_text(trace)

    assert "window" not in view("config")
    assert "The model's window is the catalog's" in view("catalog")
    told = view("server: llama.cpp /props at localhost:8080")
    assert "told by its server (llama.cpp /props at localhost:8080)" in told
