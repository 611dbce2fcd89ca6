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


def test_a_chapter_figure_is_sharp_keeps_its_size_and_its_description():
    """viz.book_figures: a PNG of two pixels per CSS pixel each way, shown at BOOK_DPI pixels
    per inch, with its description (both in the output's metadata)."""
    import base64
    import io

    from PIL import Image

    from collective_lib.viz import BOOK_DPI
    cells = ["%matplotlib inline\nimport matplotlib.pyplot as plt\nfrom collective_lib import viz\n"
             "viz.book_figures()\nfig, ax = plt.subplots(figsize=(4, 2))\nax.plot([1, 2])\n"
             "viz.describe(ax, 'A rising line.')"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   kernel_manager_class=IpcKernelManager).execute()
    (output,) = [o for o in nb.cells[0].outputs if o.output_type == "display_data"]
    shown = output.metadata["image/png"]
    assert shown["alt"] == "A rising line."
    pixels = Image.open(io.BytesIO(base64.b64decode(output.data["image/png"]))).size
    # bbox_inches="tight" trims the margins, so the size is at most the figure's
    assert 0.8 * 4 * BOOK_DPI < shown["width"] <= 4 * BOOK_DPI
    # IPython halves an odd number of pixels downwards
    assert [p - 2 * s for p, s in zip(pixels, (shown["width"], shown["height"]))] in (
        [0, 0], [0, 1], [1, 0], [1, 1]), (pixels, shown)
