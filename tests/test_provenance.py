"""What a results folder records for a reproduction: each run's arena (version and code hash)
and machine, beside the tournament's settings; `provenance.json` gathers them."""

from __future__ import annotations

import json
import re
import sqlite3

import arena
from arena import provenance
from arena.tournament.reporting import write_provenance
from arena.tournament.store import Store, read_settings

FP = {"time_control": {"move_ms": 100}, "openings_digest": "d1", "seed": 3,
      "bots": {"a": {"command": ["a"], "args": [], "program_hash": "h1"}}}


def test_the_code_fingerprint_is_the_version_and_a_hash_of_the_code():
    version, _, digest = provenance.code_fingerprint().partition("/")
    assert version == arena.__version__ and re.fullmatch(r"[0-9a-f]{12}", digest)


def test_machine_facts_name_python_the_platform_the_cpus_and_the_libraries():
    facts = provenance.machine_facts()
    assert facts["python"].count(".") == 2 and facts["cpus"] >= 1
    assert 1 <= facts["usable_cpus"] <= facts["cpus"]
    assert set(provenance.PACKAGES) == set(facts["packages"])
    assert facts["packages"]["numpy"] and facts["packages"]["trueskill"]
    json.dumps(facts)  # stored as JSON


def test_run_record():
    run = provenance.run_record("2026-01-01T00:00:00.000Z", concurrency=3, cluster=False,
                                file_digest="ab")
    assert run["arena_code"] == provenance.code_fingerprint()
    assert (run["concurrency"], run["cluster"], run["file_sha256"]) == (3, False, "ab")
    assert run["machine"] == provenance.machine_facts()


def test_every_run_is_appended_and_read_back(tmp_path):
    with Store(tmp_path) as store:
        store.save_settings({"name": "t", "seed": 3}, FP)
        store.begin_run(4)  # a caller without a record (a league) stores none
        store.begin_run(4, {"started_at": "one", "concurrency": 2})
        store.begin_run(4, {"started_at": "two", "concurrency": 1})
    runs = read_settings(tmp_path)["runs"]
    assert [(r["started_at"], r["concurrency"]) for r in runs] == [("one", 2), ("two", 1)]


def test_a_store_without_runs_or_with_a_damaged_record_reads_as_none(tmp_path):
    with Store(tmp_path) as store:
        store.save_settings({"name": "t"}, FP)
    assert read_settings(tmp_path)["runs"] == []  # an older arena's store
    conn = sqlite3.connect(tmp_path / "games.db")
    with conn:
        conn.execute("INSERT INTO meta VALUES ('runs', '{not json')")
    conn.close()
    assert read_settings(tmp_path)["runs"] == []


def test_provenance_json_holds_settings_bots_and_runs(tmp_path):
    with Store(tmp_path) as store:
        store.save_settings({"name": "t", "seed": 3, "variants": ["classic"]}, FP)
        store.begin_run(2, provenance.run_record("now", concurrency=2, cluster=False))
    path = write_provenance(tmp_path)
    assert path.name == provenance.PROVENANCE_FILE
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["settings"]["seed"] == 3 and record["settings"]["variants"] == ["classic"]
    assert record["runs"][0]["arena_code"] == provenance.code_fingerprint()
    assert record["runs"][0]["machine"]["python"]
    assert record["games"] == 0 and record["arena_version"] == arena.__version__
