"""Small pieces the `giants` commands share: argument types, errors, progress bars."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (argparse exits 2 with the message)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def error(text: str) -> None:
    """Print an error for people on stderr (stdout stays for results)."""
    print(f"error: {text}" if not text.startswith("error") else text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def progress(total: int, label: str, enabled: bool) -> Iterator[Callable[[], None]]:
    """A rich progress bar on stderr while the block runs; yields `advance()`.

    Shown only when `enabled` and stderr is a terminal, so pipes, --json and tests see
    no control codes; the bar disappears when done (transient).
    """
    if not enabled or not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns: list[Any] = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)
