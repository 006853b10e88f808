"""Command-line options of a bot (`--seed 7`, `--level=hard`), without argparse.

A bot starts once per process and, under `restart = "every-game"`, once per game: argparse (with
the regular-expression engine, gettext and shutil it imports) costs about 8 ms of a 26 ms start
of a small Python bot. This is the SDK's light replacement for the few options bots take:

    from arena.sdk import Option, parse_options

    options = parse_options({"seed": Option(int), "level": Option(str, "hard", ("easy", "hard"))})
    options["seed"]    # None when not given

As with argparse: `--name VALUE` or `--name=VALUE`, any unique prefix of a name, the last of a
repeated option wins, and a text default is converted like a given value. Errors are argparse's:
`prog: error: ...` on stderr and exit status 2; `--help` lists the options.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence


class Option:
    """One `--name VALUE` option: how its text is converted, its default, its allowed values.
    (A plain class: `dataclasses` would import `re` and `inspect` into every bot.)"""

    __slots__ = ("choices", "default", "help", "kind")

    def __init__(self, kind: Callable[[str], object] = str, default: object = None,
                 choices: Sequence[str] = (), help: str = "") -> None:
        self.kind, self.default, self.choices, self.help = kind, default, tuple(choices), help


class OptionError(ValueError):
    """A bad command line; the message names the option."""


def _flag(name: str) -> str:
    """How option `name` is written on the command line (`think_ms` is `--think-ms`)."""
    return "--" + name.replace("_", "-")


def parse(spec: Mapping[str, Option], argv: Sequence[str]) -> dict[str, object]:
    """The value of every option of `spec` from `argv` (defaults for those not given); raises
    OptionError for an unknown option, a missing or bad value, or a stray argument."""
    values = {name: _default(name, option) for name, option in spec.items()}
    flags = {_flag(name): name for name in spec}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if not arg.startswith("--") or arg == "--":
            raise OptionError(f"unrecognized argument: {arg}")
        flag, has_value, text = arg.partition("=")
        # as argparse: an option may be shortened to any prefix that names only it
        found = [flag] if flag in flags else [known for known in flags if known.startswith(flag)]
        if len(found) > 1:
            raise OptionError(f"ambiguous option: {flag} could match {', '.join(found)}")
        if not found:
            raise OptionError(f"unrecognized argument: {arg} (options: {', '.join(flags) or 'none'})")
        flag, name = found[0], flags[found[0]]
        option = spec[name]
        if not has_value:
            if not args:
                raise OptionError(f"argument {flag}: expected one argument")
            text = args.pop(0)
        if option.choices and text not in option.choices:
            wanted = ", ".join(repr(choice) for choice in option.choices)
            raise OptionError(f"argument {flag}: invalid choice: {text!r} (choose from {wanted})")
        try:
            values[name] = option.kind(text)
        except ValueError:
            kind = getattr(option.kind, "__name__", "value")
            raise OptionError(f"argument {flag}: invalid {kind} value: {text!r}") from None
    return values


def _default(name: str, option: Option) -> object:
    """The default, converted like a given value when it is text (as argparse does)."""
    if isinstance(option.default, str) and option.kind is not str:
        try:
            return option.kind(option.default)
        except ValueError:
            raise OptionError(f"argument {_flag(name)}: invalid default "
                              f"{option.default!r}") from None
    return option.default


def usage(prog: str, spec: Mapping[str, Option], description: str = "") -> str:
    lines = [f"usage: {prog} " + " ".join(f"[{_flag(name)} VALUE]" for name in spec)]
    if description:
        lines += ["", description.strip()]
    if spec:
        lines += ["", "options:"]
    for name, option in spec.items():
        allowed = f" (one of: {', '.join(option.choices)})" if option.choices else ""
        default = "" if option.default is None else f" (default: {option.default})"
        lines.append(f"  {_flag(name)} VALUE  {option.help}{allowed}{default}".rstrip())
    return "\n".join(lines)


def parse_options(spec: Mapping[str, Option], argv: Sequence[str] | None = None,
                  prog: str | None = None, description: str = "") -> dict[str, object]:
    """`parse` of `argv` (default: the process's arguments), exiting as argparse does on a bad
    command line (status 2, `prog: error: ...` on stderr) and on `--help` (status 0)."""
    args = sys.argv[1:] if argv is None else list(argv)
    prog = prog or (sys.argv[0].rsplit("/", 1)[-1] if sys.argv and sys.argv[0] else "bot")
    if "-h" in args or "--help" in args:
        print(usage(prog, spec, description))
        raise SystemExit(0)
    try:
        return parse(spec, args)
    except OptionError as error:
        print(usage(prog, spec).splitlines()[0], file=sys.stderr)
        print(f"{prog}: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
