"""A reader's JupyterLab shows no nbgrader tools on the chapters (issue 29, point 9).

The environment holds nbgrader for instructors, and nbgrader's JupyterLab
extension adds *Create Assignment*, *Validate* and the rest to every notebook,
chapters included. ``jupyter_reader/`` (put on ``JUPYTER_CONFIG_PATH`` by
``make lab`` and by the course bundle's README) switches those plugins off. This
asks JupyterLab's own server library for the page configuration a browser would
get, with and without that directory, and checks that every plugin nbgrader's
installed extension declares is off with it and on without it; so is JupyterLab's
question about Jupyter's news, which covered the first widget.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
READER_CONFIG = REPO_ROOT / "jupyter_reader"
LABEXTENSIONS = Path(sys.prefix) / "share" / "jupyter" / "labextensions"

_PAGE_CONFIG = """
import json, sys
from jupyterlab_server.config import get_page_config
config = get_page_config([sys.argv[1]], app_settings_dir=None)
disabled = config["disabledExtensions"]     # a list, or a dict of name: bool
if isinstance(disabled, dict):
    disabled = [name for name, off in disabled.items() if off]
print(json.dumps(sorted(disabled)))
"""


def disabled_plugins(config_path: str | None) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    if config_path:
        env["JUPYTER_CONFIG_PATH"] = config_path
    done = subprocess.run([sys.executable, "-c", _PAGE_CONFIG, str(LABEXTENSIONS)],
                          env=env, capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout))


def nbgrader_plugins() -> set[str]:
    """The plugin ids nbgrader's installed JupyterLab extension declares."""
    static = LABEXTENSIONS / "@jupyter" / "nbgrader" / "static"
    found = set()
    for script in static.glob("*.js"):
        found |= set(re.findall(r'id:"(@jupyter/nbgrader:[\w-]+)"', script.read_text("utf-8")))
    assert found, f"no nbgrader plugin found under {static}"
    return found


def test_the_reader_configuration_switches_off_every_nbgrader_plugin():
    plugins = nbgrader_plugins()
    assert "@jupyter/nbgrader:create-assignment" in plugins
    assert "@jupyter/nbgrader:validate-assignment" in plugins
    assert not plugins & disabled_plugins(None), "the plain environment should keep them"
    left = plugins - disabled_plugins(str(READER_CONFIG))
    assert not left, f"a reader's JupyterLab still shows {sorted(left)}"


def test_the_reader_configuration_asks_nothing_about_jupyters_news():
    """``make lab`` opened with JupyterLab's "Would you like to get notified about official
    Jupyter news?" over the first widget (a question a reader offline cannot use)."""
    news = "@jupyterlab/apputils-extension:announcements"
    static = Path(sys.prefix) / "share" / "jupyter" / "lab" / "static"
    assert any(news in script.read_text("utf-8") for script in static.glob("*.js")), news
    assert news not in disabled_plugins(None)
    assert news in disabled_plugins(str(READER_CONFIG))
