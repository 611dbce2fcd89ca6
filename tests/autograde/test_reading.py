"""What the course takes in of a student's files (collective_lib.autograde.reading): every
submitted file becomes a notebook, read without following a link, and collect copies a
link as a link. The end-to-end attacks are in tests/exercises/test_adversarial_json.py."""
import json
import os
import shutil

import nbformat
import pytest
from nbgrader.coursedir import CourseDirectory

import nbgrader_harness as h

from collective_lib.autograde.reading import (MAX_CELLS, MAX_NOTEBOOK_BYTES, UNREADABLE,
                                              SubmissionCollect, SubmissionExporter,
                                              read_submission)


def _notebook(cells) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}


def _reason(nb) -> str | None:
    return nb.metadata.get(UNREADABLE, {}).get("unreadable")


def test_what_grading_needs_is_kept_and_the_rest_dropped():
    cell = {"cell_type": "markdown", "source": ["# \ud800 answer"], "id": "answer-1",
            "metadata": {"nbgrader": {"grade_id": "a", "points": 2}, "tags": ["a,b", "a", "a"],
                         "other": [[[]]]},
            "attachments": {"p.png": {"image/png": "iVBOR"}}}
    nb = read_submission(json.dumps(_notebook([cell])))
    (kept,) = nb.cells
    assert kept.source == "# \ufffd answer" and kept.id == "answer-1"
    assert dict(kept.metadata) == {"nbgrader": {"grade_id": "a", "points": 2}}
    assert kept.attachments == {"p.png": {"image/png": "iVBOR"}}
    nbformat.validate(nb)                   # what nbgrader refused now passes its checks


@pytest.mark.parametrize("data, reason", [
    (b"\xff\xfe not json", "not valid JSON"),
    (json.dumps(_notebook([{"cell_type": "raw", "source": ""}] * (MAX_CELLS + 1))),
     f"more than {MAX_CELLS}"),
    (b" " * (MAX_NOTEBOOK_BYTES + 1), "larger than 20 MiB"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    (json.dumps(_notebook([{"cell_type": "heading", "source": ""}])), "cell 1 is not a code"),
])
def test_a_file_that_holds_no_notebook_says_why(data, reason):
    nb = read_submission(data)
    assert nb.cells == [] and reason in _reason(nb)


def _export(path):
    nb, _ = SubmissionExporter().from_filename(str(path))
    return nbformat.reads(nb, as_version=4)


def test_the_exporter_reads_a_regular_file_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    notebook = tmp_path / "a.ipynb"
    notebook.write_text(json.dumps(_notebook([{"cell_type": "code", "source": "x = 1"}])))
    assert [c.source for c in _export(notebook).cells] == ["x = 1"]
    secret = tmp_path / "secret.ipynb"
    secret.write_text(json.dumps(_notebook([{"cell_type": "code", "source": "solution"}])))
    link = tmp_path / "link.ipynb"
    link.symlink_to(secret)
    folder = tmp_path / "folder.ipynb"
    folder.mkdir()
    fifo = tmp_path / "fifo.ipynb"
    os.mkfifo(fifo)
    for path, why in [(link, "it is a link"), (folder, "it is a folder"),
                      (fifo, "not a regular file"), (tmp_path / "gone.ipynb", "cannot open it")]:
        nb = _export(path)
        assert nb.cells == [] and why in _reason(nb), (path, _reason(nb))


def test_collect_leaves_out_links_and_pipes(tmp_path):
    # links named *.html came out as the source notebook, the gradebook and /etc/shadow in
    # the student's feedback; a pipe stopped the collection of the whole class (sixth round)
    inbound = tmp_path / "inbound" / "student+a+2026"
    (inbound / "data").mkdir(parents=True)
    (tmp_path / "instructors_only.ipynb").write_text("solutions")
    (inbound / "a.ipynb").symlink_to(tmp_path / "instructors_only.ipynb")
    (inbound / "solutions.html").symlink_to(tmp_path / "instructors_only.ipynb")
    (inbound / "data" / "up").symlink_to(tmp_path)
    os.mkfifo(inbound / "pipe")
    (inbound / "data" / "values.txt").write_text("mine")
    collect = SubmissionCollect(coursedir=CourseDirectory())
    collect.do_copy(str(inbound), str(tmp_path / "submitted"))
    copied = sorted(p.relative_to(tmp_path / "submitted").as_posix()
                    for p in (tmp_path / "submitted").rglob("*"))
    assert copied == ["data", "data/values.txt"]
    assert shutil.copytree.__name__ == "copytree"      # nbgrader's copy is itself again


def test_collect_takes_no_folder_without_a_time_from_the_future_or_of_another_student(
        tmp_path, monkeypatch):
    import datetime
    import pwd
    import sys

    from nbgrader.api import Gradebook

    # a new gradebook runs `alembic`, beside this Python
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable),
                                                os.environ["PATH"]]))

    me = pwd.getpwuid(os.getuid()).pw_name            # the owner of every folder made here
    root = tmp_path / "exchange"
    inbound = root / "course" / "inbound"
    inbound.mkdir(parents=True)
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)

    def hand_in(student, when):
        (inbound / f"{student}+a+{when}+x").mkdir()

    hand_in(me, now - datetime.timedelta(minutes=5))             # my own
    hand_in(me, now + datetime.timedelta(days=365))              # from the future
    hand_in("zz", "not-a-time")                                  # stopped every collect
    hand_in("alice", now - datetime.timedelta(minutes=1))        # in alice's name, by me
    hand_in("*", now - datetime.timedelta(minutes=1))            # took the first's grade
    (inbound / f"{me}+a+{now}+link").symlink_to(tmp_path, target_is_directory=True)
    hand_in("[am]*", now - datetime.timedelta(minutes=1))
    hand_in("x\x1b]0;owned\x07\x1b[2J", now - datetime.timedelta(minutes=1))   # a terminal's
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db, "course") as gb:
        for student in (me, "alice"):
            gb.add_student(student)
    coursedir = CourseDirectory(course_id="course", assignment_id="a", db_url=db)
    collect = SubmissionCollect(coursedir=coursedir, root=str(root))
    collect.init_src()
    chosen = {r["username"]: r["timestamp"] for r in collect.src_records}
    assert set(chosen) == {me} and chosen[me] < now, chosen
    # where the owner is no student of the course (grading as root, say), the folder is
    # taken in the name it gives, as nbgrader does
    with Gradebook(db, "course") as gb:
        gb.remove_student(me)
    collect = SubmissionCollect(coursedir=coursedir, root=str(root))
    collect.init_src()
    assert {r["username"] for r in collect.src_records} == {me, "alice"}


def test_the_course_configuration_collects_and_reads_with_them():
    from nbgrader.converters import Autograde
    from nbgrader.exchange import ExchangeFactory
    from traitlets.config import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(h.EXERCISES_DIR)).load_config()
    assert ExchangeFactory(config=config).collect is SubmissionCollect
    assert Autograde(config=config).exporter_class is SubmissionExporter
