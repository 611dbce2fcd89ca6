"""No way around a forbidden name: the library's Gray code, reached by spellings no list holds.

``gray_codes`` forbids the library's ``gray``, ``gray_inverse``, ... in the hidden
tests of part (i). Each payload below is the released notebook answered with the
instructor's solution, except part (i): ``gray_of`` and ``gray_rank`` reach the
library's functions by a spelling that the source check does not know (none of
``static._DYNAMIC_CALLS`` or ``_DYNAMIC_ATTRS``, no forbidden word in a string):
``operator.attrgetter``, ``__getattribute__``, a frame's globals
(``sys._getframe``), the garbage collector (only its import is flagged), running
the library's source file (``runpy``) and a subprocess that runs the library. All are graded in one
``nbgrader autograde`` run beside the honest submission. Each earns zero on part
(i), whose visible checks it passes, with a message naming the library's
function; parts (ii) and (iii), which forbid other names and grade with a
correct ``gray_of``, keep their marks; the honest submission keeps full marks.
"""

import textwrap

import nbformat
import pytest

import nbgrader_harness as h
from collective_lib.grading.forbidden import FORBIDDEN, forbidden_name

ASSIGNMENT = "gray_codes"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
GRAY_NAMES = {"gray", "gray_inverse", "gray_code", "ring_embedding", "gray_table"}

PAYLOADS = {
    "attrgetter": '''
        import operator
        import collective_lib.cm200 as _cm

        def gray_of(i):
            return int(operator.attrgetter("gr" + "ay.gr" + "ay")(_cm)(i))

        def gray_rank(g):
            return int(operator.attrgetter("gr" + "ay.gr" + "ay_inverse")(_cm)(g))
    ''',
    "getattribute": '''
        import collective_lib.cm200 as _cm
        _module = _cm.__getattribute__("gr" + "ay")

        def gray_of(i):
            return int(_module.__getattribute__("gr" + "ay")(i))

        def gray_rank(g):
            return int(_module.__getattribute__("gr" + "ay_inverse")(g))
    ''',
    "frame": '''
        import sys
        from collective_lib.cm200 import schedules as _schedules

        class _Peek:
            found = {}

            def __eq__(self, other):
                _Peek.found.update(sys._getframe(1).f_globals)
                return True

            __hash__ = object.__hash__

        def _library(name):
            _schedules._check_order(_Peek())
            return _Peek.found[name]

        def gray_of(i):
            return int(_library("gr" + "ay")(i))

        def gray_rank(g):
            return int(_library("gr" + "ay_inverse")(g))
    ''',
    "collector": '''
        import gc as _collector

        _FOUND = {}

        def _library(name):
            if name not in _FOUND:
                _FOUND[name] = next(f for f in _collector.get_objects()
                                    if type(f).__name__ == "function" and f.__name__ == name
                                    and "cm200" in f.__module__)
            return _FOUND[name]

        def gray_of(i):
            return int(_library("gr" + "ay")(i))

        def gray_rank(g):
            return int(_library("gr" + "ay_inverse")(g))
    ''',
    "source_file": '''
        import os
        import runpy
        import collective_lib.cm200 as _cm

        _RAN = {}

        def _library(name):
            if not _RAN:
                path = os.path.join(os.path.dirname(_cm.__file__), "gr" + "ay.py")
                _RAN.update(runpy.run_path(path))
            return _RAN[name]

        def gray_of(i):
            return int(_library("gr" + "ay")(i))

        def gray_rank(g):
            return int(_library("gr" + "ay_inverse")(g))
    ''',
    "subprocess": '''
        import json
        import subprocess
        import sys

        _TABLES = {}

        def _library(name, x):
            """The library's answers, from another Python (a table of them, made once)."""
            if name not in _TABLES:
                script = (f"import json; from collective_lib.cm200 import gr{'ay'} as m; "
                          f"print(json.dumps([int(getattr(m, {name!r})(i)) "
                          f"for i in range(1 << 12)]))")
                out = subprocess.run([sys.executable, "-c", script], capture_output=True,
                                     text=True, check=True)
                _TABLES[name] = json.loads(out.stdout)
            if x < len(_TABLES[name]):
                return _TABLES[name][x]
            script = (f"from collective_lib.cm200 import gr{'ay'} as m; "
                      f"print(int(getattr(m, {name!r})({x})))")
            return int(subprocess.run([sys.executable, "-c", script], capture_output=True,
                                      text=True, check=True).stdout)

        def gray_of(i):
            return _library("gr" + "ay", i)

        def gray_rank(g):
            return _library("gr" + "ay_inverse", g)
    ''',
}


def _submissions(course):
    released = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    answered = h.answered_release(released, h.source_notebook(course, ASSIGNMENT, NOTEBOOK))
    built = {"honest": answered}
    for name, payload in PAYLOADS.items():
        nb = nbformat.from_dict(answered)
        h.find_cell(nb, "gray_solution").source = textwrap.dedent(payload).strip("\n")
        built[name] = nb
    return built


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = h.released_copy(tmp_path_factory.mktemp("forbidden") / "course", ASSIGNMENT)
    return h.autograde_many(course, ASSIGNMENT, _submissions(course))


def test_the_honest_submission_keeps_full_marks(graded):
    h.assert_full_marks(graded["honest"])


@pytest.mark.parametrize("student", sorted(PAYLOADS))
def test_a_computed_way_to_the_library_earns_nothing_and_is_named(graded, student):
    result = graded[student]
    text = result.messages("gray_tests")
    assert result.scores["gray_tests"] == 0, (student, text)
    assert FORBIDDEN in text, (student, text)
    assert forbidden_name(text) in GRAY_NAMES, (student, text)
    assert "G(0..7) = 000 001 011 010 110 111 101 100" in h.find_cell(
        result.notebook, "gray_tests").outputs[0]["text"]     # it passed the visible checks


@pytest.mark.parametrize("student", sorted(PAYLOADS))
def test_the_parts_that_forbid_other_names_keep_their_marks(graded, student):
    result = graded[student]
    for cell in ("transitions_tests", "index_tests"):
        assert result.scores[cell] == result.max_scores[cell], (student, cell,
                                                                 result.messages(cell))
