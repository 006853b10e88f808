"""The published leaderboard: a static site (jinja2 templates, plain JavaScript) of a tournament.

`build_site(results_dir, out_dir)` writes it; `arena publish` is the command-line front end.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PublishError", "build_site", "build_site_from_games", "replay_frames"]


def __getattr__(name: str) -> Any:  # lazy: importing the package stays light
    if name in ("PublishError", "build_site", "build_site_from_games"):
        from arena.publish import site

        return getattr(site, name)
    if name == "replay_frames":
        from arena.publish.replay import replay_frames

        return replay_frames
    raise AttributeError(name)
