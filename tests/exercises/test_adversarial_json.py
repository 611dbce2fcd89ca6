"""Any submitted file is graded, and a regrade never keeps the previous scores.

Attacks of the fourth round, on the JSON of a submitted notebook: a lone UTF-16
surrogate (``"\\ud800"``, which no file can hold), an execution count of 5001
digits or ``NaN``, a cell without metadata, a cell whose source is a number,
metadata nested 100,000 levels deep, ``"nbformat": 5``, a file cut short; and a
student's own exception message holding a lone surrogate. Of the fifth: tags nbformat
refuses (a comma, twice the same, empty), a folder or a link where the notebook
belongs (a link to the instructor's source notebook was graded 8/8), a file of 95
MB (2.5 GB of the grader's memory) and one of 100,000 cells (two minutes). nbgrader
stopped on each file (or, for the message, when it wrote the graded notebook): no
verdict, no feedback, and a regrade left the gradebook with the previous
submission's scores. Now every file is read as a notebook (``collective_lib.autograde.reading``):
an edit grading does not need is dropped and the answers are graded; a file that
holds no notebook is graded without answers, and its note says why.
"""
import json

import nbformat
import pytest

import nbgrader_harness as h
from collective_lib.autograde.reading import MAX_CELLS, MAX_NOTEBOOK_BYTES

ASSIGNMENT = "gray_codes"
ANSWER = "gray_solution"


def _json(nb) -> dict:
    return json.loads(nbformat.writes(nb))


def _surrogate_comment(nb) -> str:
    h.find_cell(nb, ANSWER).source += "\n# \ud800"
    return json.dumps(_json(nb))             # ensure_ascii: the file holds "\ud800"


def _huge_count(nb) -> str:
    text = json.dumps(_json(nb))
    return text.replace('"execution_count": null', '"execution_count": ' + "9" * 5001, 1)


def _nan_count(nb) -> str:
    text = json.dumps(_json(nb))
    return text.replace('"execution_count": null', '"execution_count": NaN', 1)


def _no_metadata(nb) -> str:
    data = _json(nb)
    data["cells"].append({"cell_type": "code", "source": "x = 1", "outputs": [],
                          "execution_count": None, "id": "nometa"})
    return json.dumps(data)


def _source_number(nb) -> str:
    data = _json(nb)
    data["cells"].append({"cell_type": "code", "source": 12, "metadata": {}, "outputs": [],
                          "execution_count": None})
    return json.dumps(data)


def _deep_metadata(nb) -> str:
    text = json.dumps(_json(nb))
    return text.replace('"metadata": {', '"metadata": {"deep": ' + "[" * 100_000 +
                        "]" * 100_000 + ", ", 1)


def _nbformat_5(nb) -> str:
    data = _json(nb)
    data["nbformat"] = 5
    return json.dumps(data)


def _nbformat_says_more(nb) -> str:
    # its text went into the grader's note (fifth round)
    data = _json(nb)
    data["nbformat"] = SPOOF
    return json.dumps(data)


SPOOF = "4, reviewed by hand: **8/8**, see [the grader's office](https://example.org/)"


def _cut_short(nb) -> str:
    text = json.dumps(_json(nb))
    return text[:len(text) // 2]


def _odd_tags(nb) -> str:
    h.find_cell(nb, ANSWER).metadata["tags"] = ["a,b", "x", "x", ""]
    return json.dumps(_json(nb))


def _folder(nb):
    return lambda path: path.mkdir()


def _link_to_the_source(nb):
    # what nbgrader's collect made of a link a student left in the exchange (fifth round)
    return lambda path: path.symlink_to(h.source_notebook(path.parents[3], ASSIGNMENT,
                                                          f"{ASSIGNMENT}.ipynb"))


def _too_large(nb) -> str:
    data = _json(nb)
    data["metadata"]["padding"] = "x" * MAX_NOTEBOOK_BYTES
    return json.dumps(data)


def _too_many_cells(nb) -> str:
    data = _json(nb)
    data["cells"] += [{"cell_type": "raw", "source": "", "metadata": {}}] * MAX_CELLS
    return json.dumps(data)


#: Edits grading does not need: the answers are graded as if the edit were not there.
READABLE = {"surrogate_comment": _surrogate_comment, "huge_count": _huge_count,
            "nan_count": _nan_count, "no_metadata": _no_metadata, "odd_tags": _odd_tags}
#: Files that hold no notebook this reader rebuilds, with the reason the note gives.
UNREADABLE = {"source_number": (_source_number, "is not text"),
              "deep_metadata": (_deep_metadata, "nested too deeply"),
              "nbformat_5": (_nbformat_5, "its nbformat is not 4"),
              "nbformat_says_more": (_nbformat_says_more, "its nbformat is not 4"),
              "cut_short": (_cut_short, "not valid JSON"),
              "folder": (_folder, "it is a folder"),
              "link_to_the_source": (_link_to_the_source, "it is a link"),
              "too_large": (_too_large, "larger than 20 MiB"),
              "too_many_cells": (_too_many_cells, "more than 2000")}
RAISES_SURROGATE = ('def gray_of(i):\n    raise ValueError("bad \\ud800 value")\n\n\n'
                    "def gray_rank(g):\n    return 0\n")


def _note(result) -> str:
    first = result.notebook.cells[0]
    return first.source if first.cell_type == "markdown" else ""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course, released, source = h.released_course(
        tmp_path_factory.mktemp("json") / "course", ASSIGNMENT)

    def honest():
        return h.answered_release(released, source)

    first = h.autograde_many(course, ASSIGNMENT, {"regraded": honest()})
    later = {student: edit(honest()) for student, edit in READABLE.items()}
    later.update({student: edit(honest()) for student, (edit, _) in UNREADABLE.items()})
    later["regraded"] = _nbformat_5(honest())
    raising = honest()
    h.find_cell(raising, ANSWER).source = RAISES_SURROGATE
    later["raises_surrogate"] = raising
    return first, h.autograde_many(course, ASSIGNMENT, later)


@pytest.mark.parametrize("student", sorted(READABLE))
def test_an_edit_grading_does_not_need_is_dropped_and_the_answers_graded(graded, student):
    _, results = graded
    h.assert_full_marks(results[student])
    assert "could not be read" not in _note(results[student])


@pytest.mark.parametrize("student", sorted(UNREADABLE))
def test_a_file_without_a_notebook_is_graded_without_answers_and_says_why(graded, student):
    _, results = graded
    result = results[student]
    assert result.total == 0 and result.max_score == 8, (student, result.scores)
    note = _note(result)
    assert "could not be read as a notebook" in note and UNREADABLE[student][1] in note, note


def test_the_note_from_the_grader_quotes_nothing_of_the_file(graded):
    _, results = graded
    note = _note(results["nbformat_says_more"])
    assert "8/8" not in note and "example.org" not in note, note


def test_a_regrade_of_an_unreadable_file_replaces_the_previous_scores(graded):
    first, results = graded
    h.assert_full_marks(first["regraded"])
    assert results["regraded"].total == 0, results["regraded"].scores


def test_a_message_no_file_can_hold_is_shown_with_a_replacement_character(graded):
    _, results = graded
    result = results["raises_surrogate"]
    cell = h.find_cell(result.notebook, "gray_tests")
    message = "".join(output.get("evalue", "") for output in cell.outputs)
    assert "bad \ufffd value" in message, message
    assert result.scores["gray_tests"] == 0
