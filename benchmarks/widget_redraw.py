"""How long every widget of the chapters takes to redraw.

The demos are the calls ``widgets.<factory>(...)`` in the chapters' code cells
(book/ch*.ipynb), found and built as the chapters build them.  For each the
script times

* **default**: building it, which draws it once at the chapter's settings;
* **worst**: one redraw after setting every size slider (p, m, packets k,
  rounds, hold) to its maximum, for every choice of each drop-down and toggle
  (the algorithm, the lock, "vary p" or "vary m"); the slowest counts.

Simulated times the cost explorer remembers are forgotten before every
measurement, so each one starts from scratch as a reader's first slider move
does.  Targets (issue 13): within 1 s at the default settings and within 3 s
at any setting, on the course's 2-core machine.  The script prints one line
per demo, ``demo | default s | worst s``, then ``slowest redraw: X s``, and
exits with status 1 when a demo misses a target.  Wall times depend on the
machine's load, which the first line reports.

    python benchmarks/widget_redraw.py                # every demo of the book
    python benchmarks/widget_redraw.py --only ch5     # the demos of one chapter
"""
from __future__ import annotations

import argparse
import ast
import itertools
import os
import sys
import time
from pathlib import Path

try:
    import collective_lib  # noqa: F401
except ImportError:                       # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ipywidgets as W
import nbformat
from IPython.core.inputtransformer2 import TransformerManager

from collective_lib import widgets
from collective_lib.viz import forget_simulated_times

BOOK = Path(__file__).resolve().parents[1] / "book"
DEFAULT_LIMIT = 1.0       # seconds at a demo's default settings
WORST_LIMIT = 3.0         # seconds at any setting
#: The sliders whose maximum makes a run or a picture largest.
SIZE_SLIDERS = ("p", "m", "k", "rounds", "hold")
#: The functions of :mod:`collective_lib.widgets` that build a demo.
FACTORIES = ("step_player", "value_player", "cost_explorer", "lock_player")


def book_demos(book: Path = BOOK) -> list:
    """(chapter, call) for every ``widgets.<factory>(...)`` in the chapters' code cells."""
    demos, ipython = [], TransformerManager()      # cells may hold magics (%matplotlib)
    for path in sorted(book.glob("ch*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            for node in ast.walk(ast.parse(ipython.transform_cell(cell.source))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "widgets" and node.func.attr in FACTORIES):
                    demos.append((path.stem, ast.unparse(node)))
    return demos


def build(call: str):
    """The demo ``call`` (source text such as ``widgets.step_player(...)``) builds."""
    return eval(call, {"widgets": widgets})   # the book's own code, as its cell runs it


def _timed(action) -> float:
    forget_simulated_times()
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def worst_settings(demo, cap: int | None = None) -> list:
    """Every setting to try for the worst redraw: size sliders at their maximum (at most
    ``cap`` when given), with every combination of the drop-downs' and toggles' options."""
    sizes = {}
    for name, control in demo.controls.items():
        if name in SIZE_SLIDERS and isinstance(control, (W.IntSlider, W.FloatLogSlider)):
            # A FloatLogSlider's max is the exponent: its largest value is base ** max.
            top = (control.base ** control.max if isinstance(control, W.FloatLogSlider)
                   else control.max)
            sizes[name] = top if cap is None else min(top, cap)
    choices = {name: [value for _, value in control.options]
               if isinstance(control.options[0], tuple) else list(control.options)
               for name, control in demo.controls.items()
               if isinstance(control, (W.Dropdown, W.ToggleButtons))}
    names = list(choices)
    return [{**dict(zip(names, combo)), **sizes}
            for combo in itertools.product(*(choices[n] for n in names))]


def measure(call: str, cap: int | None = None) -> tuple:
    """(default seconds, worst seconds) of the demo ``call``; see the module's docstring."""
    holder = {}
    default = _timed(lambda: holder.setdefault("demo", build(call)))
    demo = holder["demo"]
    worst = 0.0
    for setting in worst_settings(demo, cap):
        worst = max(worst, _timed(lambda: demo.set_controls(**setting)))
    return default, worst


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="",
                        help="only the demos whose chapter or call contains this text")
    parser.add_argument("--cap", type=int, default=None,
                        help="largest value of a size slider (default: the slider's maximum)")
    args = parser.parse_args(argv)
    demos = [(chapter, call) for chapter, call in book_demos()
             if args.only in chapter or args.only in call]
    if not demos:
        parser.error(f"no demo of the book matches --only {args.only!r}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"targets: default <= {DEFAULT_LIMIT:g} s, worst <= {WORST_LIMIT:g} s")
    print("demo | default s | worst s")
    # Matplotlib loads its fonts at the first picture, which a chapter has drawn long before.
    build(demos[0][1])
    slowest, missed = 0.0, []
    for chapter, call in demos:
        default, worst = measure(call, args.cap)
        name = f"{chapter}: {call.removeprefix('widgets.')}"
        print(f"{name} | {default:.2f} | {worst:.2f}", flush=True)
        slowest = max(slowest, default, worst)
        if default > DEFAULT_LIMIT or worst > WORST_LIMIT:
            missed.append(name)
    print(f"slowest redraw: {slowest:.2f} s")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
