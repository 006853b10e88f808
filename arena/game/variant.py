"""Variants as data: board size, line length, pops, fixed start columns, the ply cap and the rules.

The behaviour of the rules (who wins, what is legal, what draws) lives in `arena.game.rules`; a
variant names its `Rules` object, chosen in a spec with `rule=NAME` (default `standard`).
"""

from __future__ import annotations

from collections import namedtuple

from arena.game.rules import RULES, STANDARD, Rules

MIN_SIZE = 4
MAX_SIZE = 20


class VariantError(ValueError):
    """A variant spec string that cannot be understood."""


class UnknownRuleError(VariantError):
    """A spec that is right but for its rule, which is not registered here (a plugin's): `base`
    is the canonical spec without it, `rule` its name (a games file keeps such a variant as a
    label: `arena.reports.games_io`)."""

    def __init__(self, message: str, base: str, rule: str) -> None:
        super().__init__(message)
        self.base, self.rule = base, rule


_VARIANT_FIELDS = ("name", "columns", "rows", "connect", "pops", "fixed_columns", "start",
                   "max_plies", "rules")


class Variant:
    """The rules of one game, independent of any position: an immutable value.

    `start` holds, for each column (left to right), the discs it starts with, bottom first, as
    player numbers. `fixed_columns` (1-based) can never be popped. `rules` holds the hooks of
    every rule point (`arena.game.rules`).

    Written out rather than a frozen dataclass: `dataclasses` (with `inspect`) would double the
    start-up of `arena replay` and of every bot that imports the engine.
    """

    __slots__ = _VARIANT_FIELDS
    name: str
    columns: int
    rows: int
    connect: int
    pops: bool
    fixed_columns: tuple[int, ...]
    start: tuple[tuple[int, ...], ...]
    max_plies: int
    rules: Rules

    def __init__(self, name: str, columns: int, rows: int, connect: int, pops: bool,
                 fixed_columns: tuple[int, ...] = (), start: tuple[tuple[int, ...], ...] = (),
                 max_plies: int = 0, rules: Rules = STANDARD) -> None:
        values = (name, columns, rows, connect, pops, fixed_columns, start, max_plies, rules)
        for key, value in zip(_VARIANT_FIELDS, values, strict=True):
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"a Variant is immutable: cannot set {key!r}")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"a Variant is immutable: cannot delete {key!r}")

    def _values(self) -> tuple:
        return tuple(getattr(self, key) for key in _VARIANT_FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return "Variant(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in _VARIANT_FIELDS) + ")"

    def __reduce__(self) -> tuple:
        return (Variant, self._values())

    @property
    def cells(self) -> int:
        return self.columns * self.rows

    @property
    def spec(self) -> str:
        """The canonical spec string, naming only what differs from the preset's defaults."""
        preset = _PRESET_SHAPES[self.name]
        text = self.name
        if (self.columns, self.rows) != (preset.columns, preset.rows):
            text += f":{self.columns}x{self.rows}"
        options = []
        if self.connect != preset.connect:
            options.append(f"connect={self.connect}")
        if self.max_plies != 4 * self.cells:
            options.append(f"max-plies={self.max_plies}")
        if self.rules is not STANDARD:
            options.append(f"rule={self.rules.name}")
        return ",".join([text, *options])

    def __str__(self) -> str:
        return self.spec

    def describe(self) -> dict:
        """Everything a bot needs, without knowing preset names."""
        return {
            "spec": self.spec,
            "columns": self.columns,
            "rows": self.rows,
            "connect": self.connect,
            "pops": self.pops,
            "fixed_columns": list(self.fixed_columns),
            "start": ["".join(str(p) for p in column) for column in self.start],
            "max_plies": self.max_plies,
            "rule": self.rules.name,
        }


# The variant of a tournament, league, match, replay or openings file that names none.
DEFAULT_VARIANT = "classic"

_PresetShape = namedtuple("_PresetShape", ["columns", "rows", "connect", "pops", "outer_fixed", "summary"])


_PRESET_SHAPES: dict[str, _PresetShape] = {
    "classic": _PresetShape(7, 6, 4, False, False, "four in a row on 7x6"),
    "popout": _PresetShape(7, 6, 4, True, False, "four in a row on 7x6; pop your own bottom disc"),
    "five": _PresetShape(
        9, 6, 5, False, True, "five in a row on 9x6; outer columns start full and fixed"
    ),
    "popout-five": _PresetShape(9, 6, 5, True, True, "five with pops allowed"),
}


def near_preset(name: str) -> str | None:
    """The preset a misspelt name stands for (`clasic`: classic), if any: the one rule for
    what is a misspelling (the parse error's suggestion, a games file's refusal)."""
    from arena.spelling import closest  # only on this error path: the engine loads light

    words = sorted(name.lower().replace("_", "-").split("-"))
    # a combination named in another order (`five-popout`): closer than any spelling (user review)
    return next((p for p in _PRESET_SHAPES if sorted(p.split("-")) == words), None) \
        or closest(name.lower(), _PRESET_SHAPES)


def _did_you_mean(name: str) -> str:
    """` (did you mean 'classic'?)` for a misspelt preset (`clasic`), else ''."""
    near = near_preset(name)
    return f" (did you mean {near!r}?)" if near else ""


def build_variant(
    name: str,
    columns: int | None = None,
    rows: int | None = None,
    connect: int | None = None,
    max_plies: int | None = None,
    rules: Rules = STANDARD,
) -> Variant:
    """Make a variant from a preset name and optional overrides, checking that it is playable."""
    if name not in _PRESET_SHAPES:
        raise VariantError(f"unknown preset {name!r}{_did_you_mean(name)}; presets: "
                           f"{', '.join(_PRESET_SHAPES)}")
    shape = _PRESET_SHAPES[name]
    columns = shape.columns if columns is None else columns
    rows = shape.rows if rows is None else rows
    connect = shape.connect if connect is None else connect
    for label, value in (("columns", columns), ("rows", rows)):
        if not MIN_SIZE <= value <= MAX_SIZE:
            raise VariantError(f"{label} must be between {MIN_SIZE} and {MAX_SIZE}, got {value}")
    if not 2 <= connect <= max(columns, rows):
        raise VariantError(
            f"connect must be between 2 and the longer side ({max(columns, rows)}), got {connect}"
        )
    cells = columns * rows
    max_plies = 4 * cells if max_plies is None else max_plies
    if max_plies < 1:
        raise VariantError(f"max-plies must be positive, got {max_plies}")
    start: list[tuple[int, ...]] = [() for _ in range(columns)]
    fixed: tuple[int, ...] = ()
    if shape.outer_fixed:
        start[0] = tuple(1 if r % 2 == 0 else 2 for r in range(rows))
        start[-1] = tuple(2 if r % 2 == 0 else 1 for r in range(rows))
        fixed = (1, columns)
    return Variant(name, columns, rows, connect, shape.pops, fixed, tuple(start), max_plies, rules)


PRESETS: dict[str, Variant] = {name: build_variant(name) for name in _PRESET_SHAPES}

PRESET_SUMMARIES: dict[str, str] = {name: s.summary for name, s in _PRESET_SHAPES.items()}

_OPTION_KEYS = {"connect": "connect", "k": "connect", "max-plies": "max_plies", "cap": "max_plies"}
_OPTION_HELP = "use connect=K, max-plies=N or rule=NAME"


def split_variant_list(text: str) -> list[str]:
    """Variant specs of a comma-separated list, where a spec's own options stay with it:
    `classic,five:9x6,connect=5` is `classic` and `five:9x6,connect=5`."""
    specs: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "=" in part and specs:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


# How a variant spec is written: the one statement of it (the README, `arena variants`, the
# demo tournament's comment and parse_variant's doc say it; a test holds them to this).
SPEC_SYNTAX = "PRESET[:COLSxROWS][,connect=K][,max-plies=N][,rule=NAME]"


def parse_variant(spec: str) -> Variant:
    """Parse `PRESET[:COLSxROWS][,connect=K][,max-plies=N][,rule=NAME]`, e.g. `popout:8x7` or
    `classic:9x7,connect=5`; `rule` names registered rules (`arena.game.rules.RULES`).

    Every error names the bad part and lists the presets.
    """
    try:
        return _parse_variant(spec)
    except UnknownRuleError:
        raise
    except VariantError as error:
        message = str(error)
        if "; presets: " not in message:
            message += f"; presets: {', '.join(_PRESET_SHAPES)}"
        raise VariantError(message) from None


def _parse_size(text: str) -> tuple[int, int] | None:
    """`COLSxROWS` in ASCII digits, or None. Without `re`: this module is on every bot's start path."""
    columns, x, rows = text.partition("x")
    if not x or not all(part.isascii() and part.isdigit() for part in (columns, rows)):
        return None
    return int(columns), int(rows)


def _parse_variant(spec: str) -> Variant:
    text = spec.strip().lower()
    if not text:
        raise VariantError(f"empty variant spec; presets: {', '.join(_PRESET_SHAPES)}")
    head, *option_parts = text.split(",")
    name, _, size = head.partition(":")
    name = name.strip()
    if name not in _PRESET_SHAPES:
        raise VariantError(f"unknown preset {name!r} in variant spec {spec!r}"
                           f"{_did_you_mean(name)}; presets: {', '.join(_PRESET_SHAPES)}")
    columns = rows = None
    if size.strip():
        parsed = _parse_size(size.strip())
        if parsed is None:
            raise VariantError(f"bad size {size.strip()!r} in variant spec {spec!r}: use COLSxROWS, e.g. 8x7")
        columns, rows = parsed
    overrides: dict[str, int] = {}
    rules = STANDARD
    unknown_rule: str | None = None
    given: set[str] = set()
    for part in option_parts:
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        field = _OPTION_KEYS.get(key, key)  # `cap` is another name of `max-plies`
        if eq and field in given:  # `connect=3,connect=4`: which one was meant?
            raise VariantError(f"option {key!r} given twice in variant spec {spec!r}")
        given.add(field)
        if eq and key == "rule":
            if value not in RULES:
                unknown_rule = value  # said once the rest is known to be right
                continue
            rules = RULES[value]
            continue
        # a negative number is well-formed: build_variant says which range it is out of
        if not eq or key not in _OPTION_KEYS or not value.removeprefix("-").isdigit():
            raise VariantError(f"bad option {part.strip()!r} in variant spec {spec!r}: {_OPTION_HELP}")
        overrides[_OPTION_KEYS[key]] = int(value)
    try:
        variant = build_variant(name, columns, rows, **overrides, rules=rules)
    except VariantError as error:
        raise VariantError(f"variant spec {spec!r}: {error}") from None
    if unknown_rule is not None:
        raise UnknownRuleError(f"unknown rule {unknown_rule!r} in variant spec {spec!r}; rules: "
                               f"{', '.join(RULES)}; presets: {', '.join(_PRESET_SHAPES)}",
                               base=variant.spec, rule=unknown_rule)
    return variant
