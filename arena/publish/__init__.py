"""The published leaderboard: a static site (jinja2 templates, plain JavaScript) of a tournament.

`arena.publish.site.build_site(results_dir, out_dir)` writes it; `arena publish` is the command-line
front end. The parts: `load` (read games, settings, logs), `context` (what each page shows, pure),
`filters` (the number formats of `arena.reports.render`), `replay` (frames from the engine),
`accuracy` (accuracy, blunders and theoretical values from `arena analyze`),
`swap` (put a freshly built folder in place in one step) and `site` (write the files).

Importing this package imports none of them (the command line stays light).
"""
