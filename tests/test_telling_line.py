"""Which line of a dead bot's stderr a forfeit quotes: the error, not what runtimes print after
it (`arena.boterrors.telling_line`)."""

from __future__ import annotations

import pytest

from arena.boterrors import telling_line

NODE = """/tmp/x/bot.js:5
    throw new Error("boom");
    ^

Error: boom
    at Object.<anonymous> (/tmp/x/bot.js:5:11)
    at Module._compile (node:internal/modules/cjs/loader:1364:14)

Node.js v20.20.2
"""
RUST = """thread 'main' panicked at src/main.rs:4:5:
boom
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
"""
JAVA = """Exception in thread "main" java.lang.IllegalStateException: boom
\tat Bot.play(Bot.java:11)
\tat Bot.main(Bot.java:4)
"""
PYTHON = """Traceback (most recent call last):
  File "bot.py", line 3, in <module>
    raise ValueError("boom")
ValueError: boom
"""
GO = """panic: boom

goroutine 1 [running]:
main.main()
\t/tmp/main.go:5 +0x25
exit status 2
"""


@pytest.mark.parametrize(("stderr", "line"), [
    (NODE, "Error: boom"),  # quoted `Node.js v20.20.2` (bot author review)
    (RUST, "boom"),  # quoted the RUST_BACKTRACE advice
    (JAVA, 'Exception in thread "main" java.lang.IllegalStateException: boom'),
    (PYTHON, "ValueError: boom"),
    (GO, "panic: boom"),
    ("bot.py: error: unrecognized arguments: --sed\n", "bot.py: error: unrecognized arguments: --sed"),
    ("Node.js v20.20.2\n", "Node.js v20.20.2"),  # nothing else said: the last line still
    ("", ""),
])
def test_a_forfeit_quotes_the_error_not_the_runtimes_footer(stderr, line):
    assert telling_line(stderr) == line
