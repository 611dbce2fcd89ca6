"""Student submissions shared by the exercise tests of several assignments.

Each is the body of a generator program that replaces a solution region (see
:func:`nbgrader_harness.replace_solution`): programs that never finish, which the
guards of :mod:`collective_lib.grading` must stop with a helpful message;
:func:`validated_fixture`, which hands submissions to ``nbgrader validate`` as a student's
Validate button does, and :func:`validate_tests`, the tests of what it said. This module is a helper, not a test; a test module never imports
another test module.
"""
from __future__ import annotations

__all__ = ["SPINS", "YIELDS_FOREVER", "SHARES_WHEN_IT_CAN", "validated_fixture", "validate_tests",
           "visible_kind_test", "message_width_test"]

SPINS = '''
while True:                           # never yields, never returns
    pass
yield
'''

YIELDS_FOREVER = '''
from collective_lib import compute
while True:
    yield compute(0)
'''

# A scatter (me, p, data, root) that shares state only when it can (a red-team attack):
# registered in a global, a PE that finds itself alone (each PE in its own process) scatters
# honestly and directly; PEs that share a process send the halving tree's messages empty and
# read the root's list from its memory.
SHARES_WHEN_IT_CAN = '''
from collective_lib import compute
live = globals().setdefault("LIVE", {}).setdefault((p, root), {})
live[me] = data
yield compute(0.0)                            # by now every PE of the run has registered
if len(live) < p:
    if me == root:
        for pe in range(p):
            if pe != root:
                yield send(pe, data[pe], words=len(data[pe]))
        return data[root]
    return (yield recv(root))
rel = (me - root) % p
low, high = 0, p
while high - low > 1:
    cut = low + (high - low + 1) // 2
    if rel < cut:
        if rel == low:
            yield send((cut + root) % p, None, words=0)
        high = cut
    else:
        if rel == cut:
            yield recv((low + root) % p)
        low = cut
return live[root][me]
'''


def validated_fixture(assignment: str, build_submissions, students, written=None):
    """The module-scoped fixture ``validated`` of an exercise test: ``{student: ValidateResult}``.

    Each of ``students`` (and ``"solution"``) is the submission ``build_submissions(source)``
    makes for it, handed in as a student saves it (the release with the answers filled in,
    written answers from ``written``, ``{grade_id: text}``), and all are checked in one
    ``nbgrader validate`` run, as the student's Validate button does: it runs the visible
    checks only.  Uses the module's ``graded`` fixture for the released notebook.
    """
    import nbgrader_harness as h
    import pytest

    @pytest.fixture(scope="module")
    def validated(graded, tmp_path_factory):
        course, _ = graded
        released = course / "release" / assignment / f"{assignment}.ipynb"
        built = build_submissions(h.source_notebook(course, assignment, f"{assignment}.ipynb"))
        notebooks = {student: h.answered_release(released, built[student], written=written)
                     for student in ["solution", *students]}
        return h.validate_many(notebooks, tmp_path_factory.mktemp("validate"),
                               name=f"{assignment}.ipynb")
    return validated


def validate_tests(messages: dict) -> tuple:
    """The two tests of what Validate says, for a module with a ``validated`` fixture.

    ``messages`` is ``{student: text or [texts]}``: Validate must pass the solution and
    must not say "Success!" for any of these students, showing each text (compared with
    every run of white space made one blank: messages break their lines). Use as::

        test_validate_passes_the_solution, test_validate_reports_each_named_bug = \
            validate_tests(MESSAGES)
    """
    import pytest
    from messages import flat

    def test_validate_passes_the_solution(validated):
        assert validated["solution"].passed, validated["solution"].text

    @pytest.mark.parametrize("student", sorted(messages))
    def test_validate_reports_each_named_bug(validated, student):
        # Validate runs the visible checks only; none of them may say "Success!" for these
        result = validated[student]
        assert not result.passed, result.text
        wanted = messages[student]
        for message in [wanted] if isinstance(wanted, str) else wanted:
            assert flat(message) in flat(result.text), (message, result.text)
        # a student who set no width of their own reads every line of it whole
        assert not result.cut_lines, result.cut_lines

    return test_validate_passes_the_solution, test_validate_reports_each_named_bug


def message_width_test():
    """The test that no graded cell's error, in any submission of a module's ``graded``
    fixture, has a line that ``nbgrader validate`` would cut at its default width: the
    same checks run when a student presses Validate. Use as::

        test_no_line_of_a_message_is_cut_by_validate = message_width_test()
    """
    import nbgrader_harness as h

    def test_no_line_of_a_message_is_cut_by_validate(graded):
        _, results = graded
        cut = {(student, grade_id): lines
               for student, result in results.items()
               for grade_id, text in h.graded_errors(result).items()
               if (lines := h.cut_by_validate(text))}
        assert not cut, cut

    return test_no_line_of_a_message_is_cut_by_validate


def visible_kind_test(cases):
    """The test that each ``(student, cell, kind)`` of ``cases`` records its kind of failure,
    for a module with a ``graded`` fixture: a check in the part of a test cell students see
    fails with its cause too (not "other"), which the class report
    (``python -m collective_lib.autograde.misconceptions``) counts. Use as::

        test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
            ("direct", "time_tests", "too_slow"),
        ])
    """
    import pytest

    @pytest.mark.parametrize("student, cell, kind", cases)
    def test_a_visible_check_records_its_kind_of_failure(graded, student, cell, kind):
        _, results = graded
        assert results[student].cell(cell).metadata["collective_lib"] == {"failure": kind}

    return test_a_visible_check_records_its_kind_of_failure
