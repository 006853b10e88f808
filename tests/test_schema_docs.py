"""docs/DESIGN.md's games table is exactly `arena.schema.markdown_table()`: one cannot change alone."""

from __future__ import annotations

from pathlib import Path

from arena.schema import FRAME_COLUMNS, markdown_table

DESIGN = Path(__file__).resolve().parents[1] / "docs" / "DESIGN.md"
HEADER = "| column | type | meaning |"


def documented_games_table(text: str) -> str:
    """The markdown table that starts with the games-table header, up to its last row."""
    lines = text.splitlines()
    starts = [k for k, line in enumerate(lines) if line.strip() == HEADER]
    assert len(starts) == 1, f"DESIGN.md must hold exactly one games table ({HEADER!r})"
    table = []
    for line in lines[starts[0]:]:
        if not line.startswith("|"):
            break
        table.append(line)
    return "\n".join(table)


def test_design_md_games_table_is_the_schema():
    documented = documented_games_table(DESIGN.read_text(encoding="utf-8"))
    assert documented == markdown_table(), (
        "docs/DESIGN.md's games table differs from arena.schema: paste "
        "`python -c 'from arena.schema import markdown_table; print(markdown_table())'` into it"
    )


def test_the_table_lists_every_frame_column_in_order():
    rows = documented_games_table(DESIGN.read_text(encoding="utf-8")).splitlines()[2:]
    assert [row.split("`")[1] for row in rows] == list(FRAME_COLUMNS)


def test_a_changed_row_or_an_extra_column_is_noticed():
    table = markdown_table()
    edited = table.replace("| number of moves played |", "| moves played |")
    assert edited != table
    assert documented_games_table(f"text\n\n{edited}\n\nmore") != table
    longer = f"{table}\n| `new` | string | a column added only to the docs |"
    assert documented_games_table(f"{longer}\n") != table


def test_a_column_added_later_can_be_added_to_an_old_store():
    """The store gives an old database a new column by ALTER TABLE ADD COLUMN, which SQLite
    refuses for NOT NULL without a DEFAULT ("Cannot add a NOT NULL column with default value
    NULL"): only the columns every store has had since the first may be NOT NULL without one."""
    from arena.schema import GAME_COLUMNS

    first_schema = {"game_id", "seq", "variant", "first", "second"}
    trapped = [c.name for c in GAME_COLUMNS if c.name not in first_schema
               and "NOT NULL" in c.sql.upper() and "DEFAULT" not in c.sql.upper()]
    assert trapped == [], f"give these a DEFAULT in arena/schema.py: {trapped}"
