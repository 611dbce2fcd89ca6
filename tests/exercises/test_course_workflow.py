"""README "Running a course", run verbatim: three students, three assignments, the exchange.

tools/course_demo.py (also ``make course-demo``) runs every shell block of the
README marked ``<!-- course-workflow: ROLE -->`` in a scratch course under a
temporary directory, with the exchange there too and a home directory of its
own for the instructor and each student. alice hands in the reference
solutions, bob and carol one typical bug per assignment (carol skips
pipelining_theorem_13_3); the written answers are graded between the two
exports, as in formgrader. The last export must hold exactly the scores below.
"""
from __future__ import annotations

import csv
import html
import importlib.util
import re
import sys
from pathlib import Path

import nbformat
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


#: ``{(student, assignment): {grade_id: points}}`` the final export must hold.
EXPECTED = {
    ("alice", "gray_codes"): {"gray_tests": 3, "transitions_tests": 2, "index_tests": 3},
    ("alice", "float_associativity"): {"sum_tests": 3, "difference_tests": 2, "data_tests": 3,
                                       "explain_consequences": 2},
    ("alice", "pipelining_theorem_13_3"): {"best_k_tests": 4, "excess_tests": 3,
                                           "ratios_tests": 3},
    # the index forgets the wrap-around of the ring: right for Figure 7's example only
    ("bob", "gray_codes"): {"gray_tests": 3, "transitions_tests": 2, "index_tests": 0},
    # sums Python floats instead of float32 values; a partial written answer
    ("bob", "float_associativity"): {"sum_tests": 0, "difference_tests": 2, "data_tests": 3,
                                     "explain_consequences": 1},
    # the optimum of the Lemma 13.2 bound instead of the simulation's best k
    ("bob", "pipelining_theorem_13_3"): {"best_k_tests": 0, "excess_tests": 3,
                                         "ratios_tests": 3},
    # one transition too many
    ("carol", "gray_codes"): {"gray_tests": 3, "transitions_tests": 0, "index_tests": 3},
    # values that cancel nowhere; the written answer left as released
    ("carol", "float_associativity"): {"sum_tests": 3, "difference_tests": 2, "data_tests": 0,
                                       "explain_consequences": 0},
}
MAX_SCORES = {"gray_codes": 8, "float_associativity": 10, "pipelining_theorem_13_3": 10}


def _load_course_demo():
    spec = importlib.util.spec_from_file_location("course_demo",
                                                  REPO_ROOT / "tools" / "course_demo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


course_demo = _load_course_demo()


def _snapshot(directory: Path) -> dict:
    return {p.relative_to(directory): p.stat().st_mtime_ns for p in directory.rglob("*")}


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    """The rehearsal's root directory and the outputs of its steps."""
    before = _snapshot(REPO_ROOT / "exercises")
    root = tmp_path_factory.mktemp("course_workflow")
    outputs = course_demo.rehearse(root)
    assert _snapshot(REPO_ROOT / "exercises") == before, "the rehearsal touched exercises/"
    return root, outputs


@pytest.fixture(scope="module")
def grades(rehearsal):
    root, _ = rehearsal
    with open(root / "exercises" / "grades.csv", newline="") as fh:
        return {(row["student_id"], row["assignment"]): row for row in csv.DictReader(fh)}


def test_the_readme_marks_every_step_once():
    blocks = course_demo.readme_blocks()
    assert list(blocks) == list(course_demo.ROLES)
    assert [len(codes) for role, codes in blocks.items() if role != "install"] == \
        [1] * (len(course_demo.ROLES) - 1)
    commands = "\n".join(code for codes in blocks.values() for code in codes)
    for step in ["make setup", "nbgrader db student add", "c.Exchange.root",
                 "generate_assignment", "release_assignment", "fetch_assignment", "submit",
                 "collect", "autograde", "export", "generate_feedback", "release_feedback",
                 "fetch_feedback", "collective_lib.autograde.report",
                 "c.Validator.width", "jpserver_extensions", "labextension disable"]:
        assert step in commands, step


def test_the_class_matches_the_expected_scores():
    expected = {key for key in EXPECTED}
    handed_in = {(s, a) for s, work in course_demo.CLASS.items() for a, w in work.items()
                 if w is not None}
    assert handed_in == expected
    assert set(course_demo.ASSIGNMENTS) == set(MAX_SCORES)


def test_scores_per_question(grades):
    for student in course_demo.CLASS:
        for assignment in course_demo.ASSIGNMENTS:
            row = grades[(student, assignment)]
            questions = {c.split(":", 1)[1]: v for c, v in row.items()
                         if c.startswith(f"{assignment}:") and v != ""}
            want = EXPECTED.get((student, assignment))
            if want is None:
                assert (row["submitted"], questions, row["score"]) == ("no", {}, "0")
                continue
            assert row["submitted"] == "yes" and row["timestamp"] != ""
            assert {q: float(v) for q, v in questions.items()} == want, (student, assignment)
            assert float(row["score"]) == sum(want.values()), (student, assignment)
            assert float(row["max_score"]) == MAX_SCORES[assignment]
            assert row["needs_manual_grade"] == ""


def test_the_first_export_lists_the_written_answers_to_grade(rehearsal):
    _, outputs = rehearsal
    waiting = outputs["waiting"]
    tail = waiting[waiting.index("Waiting for a manual grade"):]
    assert re.findall(r"^  (\w+), (\w+): (\S+)$", tail, re.M) == [
        ("alice", "float_associativity", "float_associativity:explain_consequences"),
        ("bob", "float_associativity", "float_associativity:explain_consequences")]


def test_the_last_export_prints_the_table_and_draws_the_plot(rehearsal):
    root, outputs = rehearsal
    assert "No submission waits for a manual grade." in outputs["export"]
    assert re.search(r"^bob +0/4 +3/3 +3/3 +6/10$", outputs["export"], re.M), outputs["export"]
    assert (root / "exercises" / "grades.png").stat().st_size > 0


def test_students_fetch_feedback_with_the_manual_grade(rehearsal):
    root, _ = rehearsal
    for student, points in [("alice", "10.0"), ("carol", "5.0"), ("bob", "6.0")]:
        (html,) = (root / "home" / student / "float_associativity" / "feedback").glob(
            "*/float_associativity.html")
        text = html.read_text()
        assert f"(Score: {points} / 10.0)" in text, student
    assert "(iv) Consequences</a> (Score: 1.0 / 2.0)" in text


#: The score summary atop bob's feedback on float_associativity: every question by the
#: title a student knows (a test cell's first line, the written answer's heading).
BOB_SUMMARY = ["simulated_sum (Score: 0.0 / 3.0)", "tree_difference (Score: 2.0 / 2.0)",
               "my_values (Score: 3.0 / 3.0)", "(iv) Consequences (Score: 1.0 / 2.0)"]


def _summary(page: str) -> list[str]:
    """The lines of a feedback page's score summary, as a reader sees them."""
    toc = re.search(r'<div id="toc">(.*?)</div>', page, re.S).group(1)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", "", item)).split())
            for item in re.findall(r"<li\b.*?</li>", toc, re.S)]


def test_feedback_names_every_question_by_its_title(rehearsal):
    root, _ = rehearsal
    pages = {student: next((root / "home" / student / "float_associativity" / "feedback")
                           .glob("*/float_associativity.html")).read_text()
             for student in ("alice", "bob", "carol")}
    assert _summary(pages["bob"]) == BOB_SUMMARY
    # carol left the written answer as released: nbgrader's comment "No response." is
    # listed after its question, by the same title
    assert _summary(pages["carol"])[-1] == "Comment on (iv) Consequences"
    for student, page in pages.items():
        titles = [line.split(" (Score:")[0] for line in _summary(page) if "(Score:" in line]
        assert titles == [line.split(" (Score:")[0] for line in BOB_SUMMARY], student
        text = html.unescape(re.sub(r"<[^>]+>", "", page))
        # neither nbgrader's unnamed entries nor the written answer's rubric placeholder
        assert "Test cell" not in text and "Written response" not in text, student
        assert "Student's task" not in text and "0.0 / 0.0" not in text, student


def test_each_student_home_holds_the_students_setup(rehearsal):
    """README's student setup ran for every student: validate's width, no instructor tools."""
    root, _ = rehearsal
    for student in course_demo.CLASS:
        config = root / "home" / student / ".jupyter"
        assert "c.Validator.width" in (config / "nbgrader_config.py").read_text()
        assert "formgrader" in (config / "jupyter_server_config.py").read_text()
        disabled = (config / "labconfig" / "page_config.json").read_text()
        assert "@jupyter/nbgrader:create-assignment" in disabled, student


def test_the_points_table_matches_the_source_notebooks():
    """README's table of assignments gives each assignment's points as the sources do."""
    readme = (REPO_ROOT / "README.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| \d+ \| .* \| (\d+) \| (\d+) \|$", readme, re.M)
    table = {name: (int(auto), int(written)) for name, auto, written in rows}
    sources = {}
    for path in sorted((REPO_ROOT / "exercises" / "source").glob("*/*.ipynb")):
        auto = written = 0
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") or meta.get("task"):
                if meta.get("solution") or meta.get("task"):
                    written += meta["points"]
                else:
                    auto += meta["points"]
        sources[path.parent.name] = (auto, written)
    assert table == sources
