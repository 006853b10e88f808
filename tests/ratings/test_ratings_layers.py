"""The shape of arena.ratings: one registry of rating systems, and layers without cycles."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import numpy as np
import pandas as pd

import arena.ratings
from arena.commands.standings import OPTIONAL_SYSTEMS
from arena.ratings import registry
from arena.ratings.standings import compute_standings
from arena.ratings.system import Display, Rated
from arena.reports.render import render_standings

PACKAGE = Path(arena.ratings.__file__).parent

# A module may import only modules of a lower layer (any import, at any depth of the file).
LAYERS = {
    "table": 0, "sprt": 0,
    "system": 1,
    "elo": 2, "sequential": 2, "trueskill_ratings": 2,
    "pairs": 3, "registry": 3,
    "facts": 4,
    "standings": 5,
    "__init__": 6,
}


def ratings_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "arena.ratings":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("arena.ratings."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names
                      if a.name.startswith("arena.ratings.")}
    return found


def test_every_module_has_a_layer_and_imports_only_below_it():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules == set(LAYERS), "give a new module of arena/ratings a layer here"
    for name in sorted(modules):
        for imported in ratings_imports(PACKAGE / f"{name}.py"):
            assert LAYERS[imported] < LAYERS[name], f"{name} imports {imported} (not below it)"


def test_the_layer_checker_sees_function_level_imports(tmp_path):
    hidden = tmp_path / "m.py"
    hidden.write_text("def f():\n    from arena.ratings.standings import select_variant\n")
    assert ratings_imports(hidden) == {"standings"}


def test_registry_lists_each_system_module_once():
    """Derived from the registry, not a copy of it: a new system needs no edit here (the seams
    review's Glicko had to change this test)."""
    names = registry.system_names()
    assert len(set(names)) == len(names) and names[0] == "elo"  # elo sorts the table
    modules = [system.rate.__module__ for system in registry.SYSTEMS]
    assert len(set(modules)) == len(modules)
    for system, module in zip(registry.SYSTEMS, modules, strict=True):
        assert module.startswith("arena.ratings.")
        assert importlib.import_module(module).SYSTEM is system
        assert callable(system.rate) and callable(system.wanted)
        assert all(isinstance(d, Display) for d in system.display)
        assert registry.get_system(system.name) is system
    optional = [s.name for s in registry.SYSTEMS if s.optional]
    assert list(OPTIONAL_SYSTEMS) == optional, (
        "a system users may turn off is named in OPTIONAL_SYSTEMS of arena/commands/standings.py")


class _GamesPlayed:
    """A stand-in for a new rating system: one module + one registry entry, nothing else."""

    name = "played"
    optional = True
    display = (Display("played*", ("played",), 0),)

    def wanted(self, options):
        return True

    def rate(self, games, options):
        played = np.bincount(games.first, minlength=games.n_bots) + np.bincount(
            games.second, minlength=games.n_bots)
        return Rated(columns={"played": played}, notes=["played*: games played."])


def test_a_new_system_is_one_registry_entry(monkeypatch):
    games = pd.DataFrame({"first": ["a", "b", "a"], "second": ["b", "c", "c"],
                          "result": [1.0, 0.5, 0.0]})
    monkeypatch.setattr(registry, "SYSTEMS", (*registry.SYSTEMS, _GamesPlayed()))
    table = compute_standings(games)
    assert dict(zip(table["bot"], table["played"], strict=True)) == {"a": 2, "b": 2, "c": 2}
    text = render_standings(table, "table")
    assert "played*" in text and "* played*: games played." in text
    assert "played" not in compute_standings(games, skip={"played"}).columns
