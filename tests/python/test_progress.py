"""Where progress is drawn live: a terminal or a Jupyter notebook; elsewhere plain lines."""

import io

from rich.console import Console

from retx.runner import shows_live_progress


def test_a_pipe_gets_plain_lines_not_a_live_bar():
    assert not shows_live_progress(Console(file=io.StringIO()))


def test_a_terminal_gets_a_live_bar():
    assert shows_live_progress(Console(file=io.StringIO(), force_terminal=True))


def test_a_jupyter_notebook_gets_a_live_bar():
    # In Jupyter, output is not a terminal; rich draws the bar as a widget instead.
    notebook = Console(file=io.StringIO(), force_jupyter=True)
    assert not notebook.is_terminal
    assert shows_live_progress(notebook)
