"""Sphinx extension: what a reader downloads from the book.

* **The course bundle** (``_build/downloads/collective-course.zip``): the chapter
  notebooks, the ``collective_lib`` package, its pinned requirements and the
  student versions, with a README.md that says how to install and run them (the
  package's pyproject.toml names it as its readme).
  A chapter notebook alone fails at its first ``import collective_lib``; the
  bundle is what makes the notebooks run on a reader's machine.
* **The student version of every assignment**, linked from its chapter.

``exercises/source/<name>/<name>.ipynb`` is the instructor's edition: it holds
the solutions and the hidden tests.  A reader of the book gets the *student
version*, the notebook nbgrader releases (``nbgrader generate_assignment``:
solutions replaced by a starting cell, hidden tests removed, visible checks
kept).  At the start of every build this extension makes those release
notebooks with nbgrader itself, in a scratch copy of the course directory (the
course's ``exercises/`` is never written), into ``_build/downloads/``, so the
downloads always match the sources.

A chapter names its exercises with the directive ::

    ```{assignment} reading_a_run
    ```

which shows the assignment's title (the first heading of its notebook), what
it asks for, and a download link to its student version.  A name that is not
an assignment of ``exercises/source/`` stops the build.

tests/notebooks/test_assignment_links.py checks that every assignment is named
by exactly one chapter; tests/notebooks/test_built_book.py that a built page
offers the student version and that it holds no solution and no hidden test.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

#: The course directory, relative to the book's source directory (the repository root).
COURSE = Path("exercises")
#: Where the downloads are made, beside the HTML pages.
OUTPUT = "downloads"
#: The course bundle's name in OUTPUT.
BUNDLE = "collective-course.zip"
#: The page that says how to install the course's environment.
GUIDE = "/book/getting_started"

# Run in a child process: nbgrader's traitlets configuration stays out of Sphinx.
_RELEASE_SCRIPT = """
import sys
from traitlets.config.loader import PyFileConfigLoader
from nbgrader.apps import NbGraderAPI

course, names = sys.argv[1], sys.argv[2:]
config = PyFileConfigLoader("nbgrader_config.py", path=course).load_config()
config.CourseDirectory.root = course
api = NbGraderAPI(config=config)
for name in names:
    result = api.generate_assignment(name, force=True)
    if not result["success"]:
        sys.exit(f"nbgrader could not release {name}:\\n{result['log']}")
"""


def assignment_names(srcdir: Path) -> list[str]:
    """The assignments of the course: the folders of ``exercises/source/``."""
    source = Path(srcdir) / COURSE / "source"
    return sorted(path.name for path in source.iterdir()
                  if path.is_dir() and (path / f"{path.name}.ipynb").exists())


def _sources(srcdir: Path, name: str) -> list[Path]:
    return [srcdir / COURSE / "source" / name / f"{name}.ipynb", srcdir / COURSE / "nbgrader_config.py"]


def _up_to_date(srcdir: Path, outdir: Path, names: list[str]) -> bool:
    for name in names:
        built = outdir / f"{name}.ipynb"
        if not built.exists() or any(src.stat().st_mtime > built.stat().st_mtime
                                     for src in _sources(srcdir, name)):
            return False
    return True


def build_student_versions(srcdir: Path, outdir: Path) -> None:
    """Release every assignment with nbgrader into ``outdir`` (skipped when up to date)."""
    names = assignment_names(srcdir)
    if _up_to_date(srcdir, outdir, names):
        return
    with tempfile.TemporaryDirectory(prefix="student-versions-") as scratch:
        course = Path(scratch) / "course"
        course.mkdir()
        shutil.copy(srcdir / COURSE / "nbgrader_config.py", course)
        shutil.copytree(srcdir / COURSE / "source", course / "source",
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        # nbgrader runs alembic (the gradebook's migrations) by name: from this venv.
        env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                     os.environ.get("PATH", "")]))
        done = subprocess.run([sys.executable, "-c", _RELEASE_SCRIPT, str(course), *names],
                              cwd=course, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"making the student versions failed:\n{done.stderr[-4000:]}")
        outdir.mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copy(course / "release" / name / f"{name}.ipynb", outdir / f"{name}.ipynb")


_README = """\
# Collective Communication: the notebooks

This folder holds the book's chapters as Jupyter notebooks (`book/`), the
`collective_lib` package they import, and the student version of every
assignment (`exercises/`). With Python 3.11 or newer, in this folder:

    python3 -m venv .venv && .venv/bin/pip install -r requirements.txt -e .
    JUPYTER_CONFIG_PATH=$PWD/jupyter_reader .venv/bin/jupyter lab

The first command installs the pinned versions the book was built with (a few
minutes, once); the second opens JupyterLab, where the widgets of the chapters
come alive (jupyter_reader/ hides the grading tools that the environment
brings for instructors). An assignment's notebook shows a starting cell for each answer and
the checks you may run yourself; your course's grader holds the other tests.
"""


def build_bundle(srcdir: Path, outdir: Path) -> Path:
    """Zip the notebooks, the package, its requirements and the student versions."""
    bundle = outdir / BUNDLE
    files = [srcdir / "requirements.txt", srcdir / "pyproject.toml",
             *sorted((srcdir / "jupyter_reader").rglob("*.json")),
             *sorted((srcdir / "book").glob("*.ipynb")),
             *sorted(path for path in (srcdir / "collective_lib").rglob("*")
                     if path.is_file() and "__pycache__" not in path.parts)]
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("collective-course/README.md", _README)
        for path in files:
            archive.write(path, "collective-course/" + path.relative_to(srcdir).as_posix())
        for name in assignment_names(srcdir):
            archive.write(outdir / f"{name}.ipynb", f"collective-course/exercises/{name}.ipynb")
    return bundle


def _output_dir(app) -> Path:
    return Path(app.outdir).parent / OUTPUT


def _on_builder_inited(app) -> None:
    srcdir, outdir = Path(app.srcdir), _output_dir(app)
    build_student_versions(srcdir, outdir)
    build_bundle(srcdir, outdir)


def _heading(notebook: Path) -> tuple[str, str]:
    """The title of an assignment (its first heading, without "Exercise:") and its first sentence."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "".join(cells[0]["source"]).strip()
    title, _, body = text.partition("\n")
    title = title.lstrip("#").strip()
    title = title.removeprefix("Exercise:").strip()
    first = body.strip().split("\n\n")[0].replace("\n", " ")
    return title, first


class AssignmentDirective(SphinxDirective):
    """``{assignment} <name>``: an assignment's title and the link to its student version."""

    required_arguments = 1

    def run(self):
        name = self.arguments[0]
        srcdir = Path(self.env.srcdir)
        known = assignment_names(srcdir)
        if name not in known:
            raise self.error(f"{name!r} is not an assignment of exercises/source/ "
                             f"(there are: {', '.join(known)})")
        title, _ = _heading(srcdir / COURSE / "source" / name / f"{name}.ipynb")
        target = _output_dir(self.env.app) / f"{name}.ipynb"
        container = nodes.container(classes=["assignment"], ids=[f"assignment-{name}"])
        head = nodes.paragraph()
        head += nodes.strong(text="Assignment ")
        head += nodes.literal(text=name)
        head += nodes.Text(": ")
        parsed, messages = self.state.inline_text(title, self.lineno)
        head.extend(parsed)
        head.extend(messages)
        link = nodes.paragraph()
        link += nodes.Text("Download the student version, ")
        link += _download(self.env, target, f"{name}.ipynb")
        link += nodes.Text(
            " (a starting cell for each answer and the checks you may run; the grader's own "
            "tests stay hidden), and open it in Jupyter with the course's environment (")
        guide = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=GUIDE,
                                      refdoc=self.env.docname, refexplicit=True)
        guide += nodes.inline(text="Getting started")
        link += [guide, nodes.Text(")."), _on_paper(f" On paper: the file exercises/{name}.ipynb "
                                                    "of the course bundle (Getting started).")]
        container += [head, link]
        return [container]


def _download(env, path: Path, text: str):
    """A download link to ``path`` (made under the build directory) from the current page."""
    return addnodes.download_reference(
        "", "", nodes.literal(text=text), refdoc=env.docname,
        reftarget="/" + Path(os.path.relpath(path, env.srcdir)).as_posix(), refexplicit=True)


def _on_paper(text: str):
    """Text that only the printed book shows, where a download link leads nowhere
    (``print-only`` in ``_ext/static/print.css``)."""
    return nodes.inline(text=text, classes=["print-only"])


class CourseBundleDirective(SphinxDirective):
    """``{course-bundle}``: the download link to the course bundle, with its size."""

    def run(self):
        bundle = _output_dir(self.env.app) / BUNDLE
        para = nodes.paragraph()
        para += nodes.Text("Download ")
        para += _download(self.env, bundle, BUNDLE)
        para += nodes.Text(f" ({bundle.stat().st_size / 1e6:.1f} MB): the chapters as notebooks, "
                           "the collective_lib package, its pinned requirements and the "
                           "student version of every assignment.")
        para += _on_paper(" On paper: the bundle is a link on this page of the book's web "
                          "edition.")
        return [para]


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    app.add_directive("assignment", AssignmentDirective)
    app.add_directive("course-bundle", CourseBundleDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
