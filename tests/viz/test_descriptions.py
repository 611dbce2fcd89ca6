"""A drawing's description reaches the notebook's output as the PNG's alt text (chapters
use ``%matplotlib inline``, as here)."""
import nbformat
import pytest
from nbclient import NotebookClient

from collective_lib.viz import describe, description
from jupyter_kernels import IpcKernelManager


def test_a_figure_reads_the_sentences_of_its_axes_in_order():
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2)
    describe(right, "Right.")
    describe(left, "Left.")
    describe(left, "  Left,\n again. ")
    assert description(fig) == "Left, again. Right."
    plt.close(fig)
    fig, ax = plt.subplots()
    assert description(fig) is None
    with pytest.raises(ValueError, match="empty"):
        describe(ax, "  ")
    plt.close(fig)


def test_in_a_kernel_each_shown_figure_carries_its_own_description():
    cells = [
        "%matplotlib inline\nimport matplotlib.pyplot as plt\nfrom collective_lib.viz import describe\n"
        "fig, ax = plt.subplots()\nax.plot([1, 2])\ndescribe(ax, 'A rising line.')",
        "fig, ax = plt.subplots()\nax.plot([2, 1])\ndescribe(ax, 'A falling line.')\nplt.show()",
        "fig, ax = plt.subplots()\nax.plot([1, 1])",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   kernel_manager_class=IpcKernelManager).execute()
    shown = [[(o.get("metadata", {}).get("image/png", {}).get("alt"), "image/png" in o.data)
              for o in cell.outputs if o.output_type == "display_data"] for cell in nb.cells]
    assert shown == [[("A rising line.", True)], [("A falling line.", True)], [(None, True)]]
