"""Each student's variant (collective_lib.autograde.variants): reproducible, independent per
student, rebuilt by the trusted checker from the id nbgrader grades under, listed for the
instructor; the chapters have none."""
from __future__ import annotations

import csv
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from collective_lib.autograde import variants
from collective_lib.autograde.checker import check_notebook
from collective_lib.autograde.variants import DECLARED, listing, student_id, use_student, variant

REPO = Path(__file__).resolve().parents[2]
IDS = [f"s{i:04d}" for i in range(1000)]


@pytest.mark.parametrize("assignment", sorted(DECLARED))
def test_same_student_same_values(assignment):
    assert dict(variant(assignment, "alice")) == dict(variant(assignment, "alice"))
    for name, value in variant(assignment, "alice").items():
        assert value in DECLARED[assignment][name]


def test_values_are_spread_and_collisions_rare():
    # fit_and_predict has a seed among a million: two of 1000 students share one rarely
    seeds = Counter(variant("fit_and_predict", s).seed for s in IDS)
    assert max(seeds.values()) <= 2 and len(seeds) >= 995
    # every choice of the small sets is used, none by much more than its share
    for assignment, declared in DECLARED.items():
        for name, choices in declared.items():
            if len(choices) > 20:
                continue
            counts = Counter(variant(assignment, s)[name] for s in IDS)
            assert set(counts) == set(choices), (assignment, name)
            assert max(counts.values()) < 2 * len(IDS) / len(choices), (assignment, name, counts)


def test_another_assignment_or_course_gives_independent_values(monkeypatch):
    a = [variant("reading_a_run", s).swaps for s in IDS]
    monkeypatch.setattr(variants, "COURSE", "another course")
    b = [variant("reading_a_run", s).swaps for s in IDS]
    assert sum(x == y for x, y in zip(a, b)) < 0.5 * len(IDS)


def test_student_id_from_checker_env_config_or_login(tmp_path, monkeypatch):
    monkeypatch.delenv("COLLECTIVE_STUDENT_ID", raising=False)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    import pwd, os
    assert student_id() == pwd.getpwuid(os.getuid()).pw_name
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.Exchange.root = '/x'\nc.CourseDirectory.student_id = 'bob'\n")
    assert student_id() == "bob"
    monkeypatch.setenv("COLLECTIVE_STUDENT_ID", "carol")
    assert student_id() == "carol"
    use_student("dave")
    try:
        assert student_id() == "dave" and variant("cycles_crossover").student == "dave"
    finally:
        use_student(None)


def test_listing_from_a_roster_and_a_gradebook(tmp_path):
    roster = tmp_path / "students.csv"
    with open(roster, "w", newline="") as handle:
        csv.writer(handle).writerows([["id", "first_name"], ["bob", "B"], ["alice", "A"]])
    gradebook = tmp_path / "gradebook.db"
    with sqlite3.connect(gradebook) as db:
        db.execute("CREATE TABLE student (id VARCHAR PRIMARY KEY, first_name VARCHAR)")
        db.executemany("INSERT INTO student VALUES (?, ?)", [("alice", "A"), ("bob", "B")])
    for source in (roster, gradebook):
        out = subprocess.run([sys.executable, "-m", "collective_lib.autograde.variants", "list",
                              "reading_a_run", "--students", str(source)],
                             capture_output=True, text=True, check=True).stdout
        lines = out.splitlines()
        assert lines[0].split() == ["student", "swaps", "copies"]
        for line, who in zip(lines[1:], ("alice", "bob")):
            v = variant("reading_a_run", who)
            assert line.split() == [who, str(v.swaps), str(v.copies)]
    assert listing("cycles_crossover", ["alice"]).splitlines()[1].split()[0] == "alice"


def test_the_checker_rebuilds_the_values_from_the_jobs_student():
    """The set-up cell, the student's cells (in the sandbox) and the tests all see the
    variant of the id in the job, not of the login that runs them."""
    setup = ("from collective_lib.autograde.variants import variant\n"
             "V = variant('fit_and_predict')")
    student = "MINE = dict(V)\nTHEIRS = dict(variant('fit_and_predict'))"
    test = ("assert dict(V) == dict(variant('fit_and_predict', 'zoe'))\n"
            "assert MINE == dict(V) and THEIRS == dict(V), (MINE, THEIRS)")
    job = {"cells": [{"role": "trusted", "source": setup, "id": "setup"},
                     {"role": "student", "source": student, "id": None},
                     {"role": "graded", "source": test, "id": "tests"}],
           "hide": [], "uid": None, "limits": {}, "student": "zoe"}
    try:
        verdicts = check_notebook(job)
    finally:
        use_student(None)
    assert verdicts["tests"]["passed"], verdicts


def test_the_chapters_have_no_variants():
    for chapter in sorted((REPO / "book").glob("*.ipynb")):
        text = chapter.read_text()
        assert "autograde.variants" not in text and "variant(" not in text, chapter.name


def test_the_listing_prints_no_terminal_escape_of_a_student_id():
    # an id is a folder name in the exchange: printed, it must not erase the screen
    table = listing("reading_a_run", ["ann", "x\x1b]0;owned\x07\x1b[2J"])
    assert "\x1b" not in table and "\x07" not in table
    assert "x\\x1b]0;owned\\x07\\x1b[2J" in table
