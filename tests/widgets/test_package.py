"""widgets is a package of small modules, each with its own __all__, re-exported as one."""
import subprocess
import sys

from package_checks import package_problems


def test_every_module_exports_exactly_its_public_names_and_widgets_all_of_them():
    assert package_problems("collective_lib.widgets") == []


def test_import_leaves_pyplot_and_the_backend_alone():
    code = ("import sys, collective_lib.widgets; "
            "print('matplotlib.pyplot' in sys.modules, 'matplotlib.animation' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "False"] and out.stderr == ""


