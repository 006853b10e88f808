"""Perfect play for drop-only four in a row: the exact solver and what is built on it.

- `kernel`: Pons' solver, compiled by numba (`COMPILED` says whether it is).
- `engine.Engine`: one board size's solver and tables; `score`, `best_moves`, `move_scores`
  under a node budget.
- `book`: the opening book file (`data/classic_book.npz`) and its builder.
- `oracle.Oracle`: book + engine for `arena.game.Game` positions, time budgets (`NodeRate`);
  `solvable(variant)` says which variants it handles.
- `analysis`, `analysis_store`: move quality against perfect play (`arena analyze`).
- `adjudicate`: the proven result of a game in progress (solver adjudication).
"""
