"""The live demos in a reader's JupyterLab, driven with the keyboard alone (issue 29, point 3).

JupyterLab (with ``jupyter_reader/``, as ``make lab`` starts it) runs in headless Chromium,
reached over the DevTools protocol as tools/browser_check.py reaches the built book. A
notebook showing a step player and a lock player is run with Shift+Enter; then, with keys only, the step slider moves, the play toggle
plays, and every control and picture has a name a screen reader can read.  At a laptop's
and a phone's width nothing of the demos runs past the output.
"""
from __future__ import annotations

import base64
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_core.paths import jupyter_runtime_dir

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Seconds JupyterLab, the kernel and the widgets may take to appear.
PATIENCE = 120
KEYS = {"Tab": 9, "Enter": 13, " ": 32, "ArrowRight": 39, "b": 66}
SHIFT, CONTROL = 8, 2

# The controls of the outputs and what names them for a screen reader: a label element
# tied to the control, its own text, aria-label, or (for an image) alt or title.
NAMES = r"""
(() => [...document.querySelectorAll(
    ".jp-OutputArea select, .jp-OutputArea input, .jp-OutputArea button, " +
    ".jp-OutputArea [role=slider], .jp-OutputArea img")]
  .filter(el => el.offsetParent !== null)
  .map(el => {
    const label = el.labels && el.labels.length ? el.labels[0].textContent : "";
    const slider = el.getAttribute("role") === "slider"
      ? el.closest(".widget-slider").querySelector(".widget-label").textContent : "";
    return [el.tagName.toLowerCase() + (el.getAttribute("role") ? "/" + el.getAttribute("role") : ""),
            (label || el.getAttribute("aria-label") || el.alt || el.title ||
             el.textContent || "").trim(), slider];
  }))()
"""


# The boxes of the outputs that scroll sideways, or cut off what runs past their side,
# but a box of one picture or one table (wider than a phone, they scroll at their natural
# size): a widget's row that scrolls hides the picture's edge or the controls, and on a
# phone (whose scroll bars show only while scrolling) the picture stood, unseen, right
# of the screen.
SIDEWAYS = r"""
(() => [...document.querySelectorAll(".jp-Cell-outputArea")].flatMap(area =>
  [...area.querySelectorAll("*")]
    .filter(box => box.offsetParent !== null && box.scrollWidth > box.clientWidth + 1
            && getComputedStyle(box).overflowX !== "visible")
    .filter(box => !(box.children.length === 1
                     && ["IMG", "TABLE"].includes(box.children[0].tagName)))
    .map(box => (box.className.toString() + ": " + box.textContent).slice(0, 80))))()
"""


def _browser_check():
    spec = importlib.util.spec_from_file_location("browser_check",
                                                  REPO_ROOT / "tools" / "browser_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _listening_port(runtime: Path, pid: int) -> int | None:
    """The port of the server ``pid`` once it listens (it writes its ``jpserver-<pid>.json``
    into its runtime folder then), else None. The server picks the port itself: one picked
    here and handed over could be taken by another process before the server binds it."""
    info = runtime / f"jpserver-{pid}.json"
    try:
        return json.loads(info.read_text())["port"]
    except (FileNotFoundError, json.JSONDecodeError):   # not yet, or half written
        return None


def _until(condition, what: str, timeout: float = PATIENCE):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"JupyterLab: {what} did not happen within {timeout} s")
        time.sleep(0.25)


class Lab:
    """A JupyterLab page in Chromium, with keys to press and scripts to evaluate."""

    def __init__(self, tools):
        self.tools = tools

    def js(self, expression: str):
        return self.tools.evaluate(expression)

    def press(self, key: str, modifiers: int = 0):
        """Press and release ``key`` as a keyboard would (a raw key-down, the character it
        types if any, a key-up)."""
        code = {" ": "Space", "b": "KeyB"}.get(key, key)
        event = dict(key=key, code=code,
                     windowsVirtualKeyCode=KEYS[key], modifiers=modifiers)
        self.tools.call("Input.dispatchKeyEvent", type="rawKeyDown", **event)
        if key == " ":
            self.tools.call("Input.dispatchKeyEvent", type="char", text=" ", **event)
        self.tools.call("Input.dispatchKeyEvent", type="keyUp", **event)

    def focused(self) -> str:
        return self.js("(() => { const e = document.activeElement; return e.tagName + '/' + "
                       "(e.getAttribute('role') || '') + '/' + e.textContent.trim(); })()")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    check = _browser_check()
    chromium = next(filter(None, map(shutil.which, check.CHROMIUM_NAMES)), None)
    assert chromium is not None, "no Chromium on PATH: `make test` installs it"
    root = tmp_path_factory.mktemp("lab")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from collective_lib import widgets\n"
        "display(widgets.step_player('broadcast', algorithm='binomial_broadcast', p=8))\n"
        "display(widgets.lock_player('cas_spin_lock', p=3, rounds=1))\n"
        "display(widgets.choice_explorer('allreduce', ts=100, tw=1, m_max=10_000))\n"
        "display(widgets.value_player('reduce', p=16))")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}})
    nbformat.write(notebook, root / "demo.ipynb")
    # The server's files (its jpserver-<pid>.json, its kernels' sockets) go where Jupyter puts
    # them: a Unix socket's path may not be longer than 107 bytes, a pytest folder's may be.
    runtime = Path(jupyter_runtime_dir())
    env = dict(os.environ, JUPYTER_CONFIG_PATH=os.pathsep.join(
        [str(REPO_ROOT / "jupyter_reader"), os.environ["JUPYTER_CONFIG_PATH"]]))
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--port=0", "--port-retries=0",
         "--ServerApp.token=reader", f"--ServerApp.root_dir={root}", "--allow-root",
         "--LabApp.news_url=", "--ServerApp.ip=127.0.0.1"],
        env=env, stdout=subprocess.DEVNULL, stderr=(root / "lab.log").open("w"))
    profile = tmp_path_factory.mktemp("chromium")
    browser = None
    try:
        port = _until(lambda: _listening_port(runtime, server.pid), "the server's start")
        url = f"http://127.0.0.1:{port}/lab/tree/demo.ipynb?token=reader&reset"
        browser, socket_url = check.start_chromium(chromium, profile)
        tools = check.DevTools(socket_url)
        tools.call("Page.enable")
        # A headless page never has the window's focus, so no element in it gets focus
        # events, and JupyterLab never learns which notebook is the current one.
        tools.call("Emulation.setFocusEmulationEnabled", enabled=True)
        tools.call("Emulation.setDeviceMetricsOverride", width=check.WIDTH,
                   height=check.HEIGHT, deviceScaleFactor=1, mobile=False)
        tools.call("Page.navigate", url=url)
        page = Lab(tools)
        _until(lambda: page.js("!!document.querySelector('.jp-Notebook .jp-Cell') && "
                               "document.querySelector('.jp-Notebook-ExecutionIndicator')"
                               "?.dataset.status === 'idle'"),
               "the notebook with an idle kernel")
        # The notebook becomes JupyterLab's current one when something in it has the focus
        # (the status bar then shows its kernel); only then do its commands act on it.
        # Focused again on every look: JupyterLab may still move the focus while it lays
        # out its panels, and a focus given once and taken was waited for in vain.
        _until(lambda: page.js("document.querySelector('.jp-Notebook .jp-Cell').focus(), "
                               "document.querySelector('#jp-main-statusbar')"
                               "?.innerText.includes('Idle') && "
                               "!!document.activeElement.closest('.jp-Notebook')"),
               "the notebook becoming current, with the focus in it")
        page.press("Enter", SHIFT)                   # run the cell
        try:
            _until(lambda: page.js("document.querySelectorAll('.jp-OutputArea img').length")
                   >= 3, "the three demos' pictures")
        except AssertionError as failure:
            shot = root / "lab.png"
            shot.write_bytes(base64.b64decode(
                tools.call("Page.captureScreenshot", format="png")["data"]))
            raise AssertionError(f"{failure}; the page: {shot}, the focus: "
                                 f"{page.focused()}, the server's log: {root / 'lab.log'}")
        yield page
    finally:
        if browser is not None:
            browser.terminate()
            browser.wait(timeout=30)
        server.terminate()
        server.wait(timeout=30)


def test_every_control_and_picture_has_a_name(lab):
    shown = lab.js(NAMES)
    assert len(shown) >= 12, shown
    unnamed = [kind for kind, name, slider in shown if not (name or slider)]
    assert not unnamed, f"controls without a name for a screen reader: {unnamed} in {shown}"
    pictures = [name for kind, name, _ in shown if kind == "img"]
    assert all(name.startswith(("Step 1 of", "Memory operations", "Fastest allreduce"))
               for name in pictures), pictures


def test_the_step_slider_moves_with_the_arrow_keys(lab):
    lab.js("document.querySelector('.jp-OutputArea select').focus(); true")
    before = lab.js("document.querySelector('.jp-OutputArea img').title")
    for _ in range(12):                     # Tab through p, root and their read-outs
        lab.press("Tab")
        if lab.js("document.activeElement.closest('.widget-slider')?.querySelector("
                  "'.widget-label').textContent") == "step":
            break
    assert "slider" in lab.focused(), lab.focused()
    lab.press("ArrowRight")
    _until(lambda: lab.js("document.querySelector('.jp-OutputArea img').title") != before,
           "the picture of step 2")
    assert lab.js("document.querySelector('.jp-OutputArea img').title").startswith("Step 2 of")


def test_the_play_toggle_plays_from_the_keyboard(lab):
    lock_output = "document.querySelectorAll('.jp-OutputArea-output')[1]"
    lab.js(f"{lock_output}.querySelector('button').focus(); true")
    assert lab.focused().endswith("play"), lab.focused()
    time_slider = f"{lock_output}.querySelectorAll('[role=slider]')[3]"
    assert lab.js(f"{time_slider}.getAttribute('aria-valuenow')") == "0.0"
    lab.press(" ")
    _until(lambda: float(lab.js(f"{time_slider}.getAttribute('aria-valuenow')")) > 0,
           "the time slider moving after play")


def test_the_choice_explorer_redraws_when_a_key_clears_its_check_box(lab):
    explorer = "document.querySelectorAll('.jp-OutputArea-output')[2]"
    picture = f"{explorer}.querySelector('img').title"
    assert "Dashed lines: MPICH's switches" in lab.js(picture)
    lab.js(f"{explorer}.querySelector('input[type=checkbox]').focus(); true")
    assert lab.focused().startswith("INPUT"), lab.focused()
    lab.press(" ")
    _until(lambda: "MPICH" not in lab.js(picture), "the picture without MPICH's switches")
    assert lab.js(picture).startswith("Fastest allreduce by the closed forms, ts = 100, tw = 1")


@pytest.mark.parametrize("width", [1280, 400])
def test_no_picture_or_control_runs_past_the_output_on_a_laptop_or_a_phone(lab, width):
    # Beside the file browser on a 1280-pixel laptop a picture right of the controls ran
    # 60 pixels past the output (its legend's words and last tick behind a scroll bar
    # that moved the controls away); on a phone (the file browser closed) the pictures
    # and the value player's sliders lay wholly right of the screen.
    tools = lab.tools
    try:
        tools.call("Emulation.setDeviceMetricsOverride", width=width, height=800,
                   deviceScaleFactor=1, mobile=False)
        if width < 600:
            lab.js("document.querySelector('.jp-Notebook').focus(); true")
            lab.press("b", CONTROL)                 # close the file browser, as on a phone
            _until(lambda: not lab.js("document.querySelector('#jp-left-stack')"
                                      ".offsetWidth"), "the file browser closing")
        time.sleep(1)                               # JupyterLab lays its panels out again
        assert lab.js("document.querySelector('.jp-Cell-outputArea').offsetWidth") > 200
        assert lab.js(SIDEWAYS) == []
    finally:
        tools.call("Emulation.setDeviceMetricsOverride", width=_browser_check().WIDTH,
                   height=_browser_check().HEIGHT, deviceScaleFactor=1, mobile=False)
