"""Summary tables of the catalog: one row per registered algorithm of some operations.

The chapters end with a table of their algorithms.  It is built here from
:func:`~collective_lib.catalog` at the moment it is shown, so an algorithm that
is registered later appears in it without any edit to the chapter.  Each row
gives the algorithm's name, network and port model, its closed-form time at the
given ``p`` and ``m`` (with the best number of packets for a pipelined one),
whether that time is exact (``=``) or an upper bound (``<=``), the closed form
itself, the values of ``p`` it accepts and its source.  With ``simulate=True`` the
table also shows the simulated time (and says so in the cell should a PE end with
a wrong result).

In a notebook the table is HTML: the closed forms typeset (the catalog's TeX,
:attr:`~collective_lib.catalog.Algorithm.tex`), the works of the sources linked
to their DOI or address, the rows grouped by operation, inside a box of its own
that scrolls sideways where the page is narrower than the table.  As text (and
Markdown) the closed form is the cost function's docstring.

Examples
--------
>>> from collective_lib.summary import summary_table
>>> table = summary_table("broadcast", p=64, m=1000)
>>> "two_tree_broadcast" in table.names()
True
>>> row = table.row("binomial_broadcast")
>>> row.time, row.relation, row.valid_p
(6600.0, '=', 'any')
>>> "<table" in table._repr_html_()
True
"""
from __future__ import annotations

import html
import inspect
import math
import re
from dataclasses import dataclass

from .catalog import catalog, optimal_params

__all__ = ["SummaryRow", "SummaryTable", "summary_table", "valid_p_label", "LABEL_PS",
           "WORK_LINKS"]

#: The values of p :func:`valid_p_label` looks at to describe an algorithm's valid p.
LABEL_PS = range(1, 257)

#: How the catalog's sources name a work, and its DOI or address (``book/references.bib``
#: holds the same; a test keeps them equal). Grama et al. 2003 has neither.
WORK_LINKS = {
    "Sanders, Speck, Träff 2009": "https://doi.org/10.1016/j.parco.2009.09.001",
    "Sanders et al. 2019": "https://doi.org/10.1007/978-3-030-25209-0",
    "Mathur and Johnsson 1993": "http://nrs.harvard.edu/urn-3:HUL.InstRepos:23518805",
    "Johnsson and Ho 1989": "https://doi.org/10.1109/12.29465",
    "Bruck, Ho, Kipnis, Upfal, Weathersby, IEEE TPDS 8(11), 1997":
        "https://doi.org/10.1109/71.642949",
    "Rabenseifner, ICCS 2004": "https://doi.org/10.1007/978-3-540-24685-5_1",
}


@dataclass(frozen=True)
class SummaryRow:
    """One algorithm of a :class:`SummaryTable`.

    ``time`` is the closed form's time at the table's ``p`` and ``m`` (None when
    the algorithm cannot run on p PEs with m words); ``params`` the parameters it was
    evaluated with (the best ``k`` of a pipelined algorithm); ``simulated`` and
    ``correct`` are None unless the table was built with ``simulate=True``.
    """
    operation: str
    name: str
    network: str
    ports: str
    time: float | None
    relation: str
    formula: str
    valid_p: str
    source: str
    params: dict
    simulated: float | None = None
    correct: bool | None = None
    tex: str = ""


class SummaryTable:
    """Rows of a summary table; shown as HTML in a notebook, as aligned text otherwise."""

    def __init__(self, rows, p: int, m: int, ts: float, tw: float, simulated: bool):
        self.rows = list(rows)
        self.p, self.m, self.ts, self.tw = p, m, ts, tw
        self.simulated = simulated

    def names(self) -> list:
        """The algorithms' names, in table order."""
        return [row.name for row in self.rows]

    def row(self, name: str) -> SummaryRow:
        """The row of algorithm ``name`` (ValueError naming it if it is not in the table)."""
        for row in self.rows:
            if row.name == name:
                return row
        raise ValueError(f"{name!r} is not in this table; it has {self.names()}")

    def operations(self) -> list:
        """The operations of the table, in its order."""
        return list(dict.fromkeys(row.operation for row in self.rows))

    def header(self) -> list:
        """The column titles (an operation column only when the table has several)."""
        columns = ["algorithm", "network", "ports", f"time (p={self.p:,}, m={self.m:,})", "",
                   "closed form", "valid p", "source"]
        if self.simulated:
            columns[5:5] = ["simulated"]
        if len(self.operations()) > 1:
            columns.insert(0, "operation")
        return columns

    def cells(self) -> list:
        """The table as rows of strings, in the order of :meth:`header`."""
        lines = []
        for row in self.rows:
            cells = [row.name, row.network, row.ports, _time(row),
                     row.relation if row.time is not None else "", row.formula, row.valid_p,
                     row.source]
            if self.simulated:
                cells[5:5] = [_simulated(row)]
            if len(self.operations()) > 1:
                cells.insert(0, row.operation)
            lines.append(cells)
        return lines

    def caption(self) -> str:
        return (f"Closed-form times for p = {self.p:,}, m = {self.m:,} words, ts = {self.ts:g}, "
                f"tw = {self.tw:g}, each on its own port model; '=' exact, '<=' an upper bound.")

    def _repr_html_(self) -> str:
        titles = ["algorithm and source", "network, ports", f"time (p={self.p:,}, m={self.m:,})",
                  *(["simulated"] if self.simulated else []), "closed form", "valid p"]
        # the closed forms' column has a class of its own: on paper each takes a line
        head = "".join(f'<th scope="col"{_FORM_CLASS * (title == "closed form")}>'
                       f'{html.escape(title)}</th>' for title in titles)
        body = []
        for operation in self.operations():
            if len(self.operations()) > 1:
                body.append(f'<tr><th scope="colgroup" colspan="{len(titles)}">'
                            f"{html.escape(operation)}</th></tr>")
            body += ["<tr>" + "".join(_html_cells(row, self)) + "</tr>"
                     for row in self.rows if row.operation == operation]
        # The caption stands above the box (a table's own caption would be as wide as the
        # table and cut off by the box); it names the table and the region for a screen
        # reader. The box scrolls sideways on a narrow page and takes the keyboard focus
        # (WCAG); MathJax typesets only inside elements of class mathjax_process.
        label = "summary-" + "-".join([*self.operations(), f"p{self.p}", f"m{self.m}"])
        return (f'<p id="{label}">{html.escape(self.caption())}</p>'
                f'<div class="collective-summary" role="region" tabindex="0" '
                f'aria-labelledby="{label}" style="overflow-x: auto">'
                f'<table class="mathjax_process" aria-labelledby="{label}">'
                f'<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')

    def to_markdown(self) -> str:
        """The table in Markdown (pipes in cells escaped)."""
        def line(cells):
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
        rows = [line(self.header()), "|" + "---|" * len(self.header())]
        return "\n".join(rows + [line(cells) for cells in self.cells()])

    def __str__(self) -> str:
        table = [self.header()] + self.cells()
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
        return self.caption() + "\n" + "\n".join(lines)

    __repr__ = __str__


def _time(row) -> str:
    if row.time is None:
        return "-"
    return f"{row.time:,g}" + (f" (k={row.params['k']:,})" if "k" in row.params else "")


def _simulated(row) -> str:
    if row.simulated is None:
        return "-"
    return f"{row.simulated:,g}" + ("" if row.correct else " (wrong results)")


_WORK_NAMES = re.compile("|".join(map(re.escape, WORK_LINKS)))


def _linked_source(source: str) -> str:
    """The source as HTML, every work it names linked to its DOI or address."""
    parts, end = [], 0
    for match in _WORK_NAMES.finditer(source):
        link = html.escape(WORK_LINKS[match.group()])
        parts += [html.escape(source[end:match.start()]),
                  f'<a href="{link}">{html.escape(match.group())}</a>']
        end = match.end()
    return "".join(parts) + html.escape(source[end:])


#: The attribute of a summary's closed-form cells (print.css puts each on a line of its own).
_FORM_CLASS = ' class="closed-form"'


def _html_cells(row, table) -> list:
    """The ``<td>`` elements of ``row``."""
    relation = {"=": "=", "<=": "&le;"}[row.relation] if row.time is not None else ""
    cells = [f"<code>{html.escape(row.name)}</code><br><small>{_linked_source(row.source)}"
             "</small>",
             f"{html.escape(row.network)},<br>{html.escape(row.ports)}",
             f"{relation} {html.escape(_time(row))}".strip()]
    if table.simulated:
        cells.append(html.escape(_simulated(row)))
    formula = (f"\\({html.escape(row.tex)}\\)" if row.tex else html.escape(row.formula))
    return ([f"<td>{cell}</td>" for cell in cells] + [f"<td{_FORM_CLASS}>{formula}</td>",
                                                     f"<td>{html.escape(row.valid_p)}</td>"])


def valid_p_label(entry) -> str:
    """``"any"``, ``"powers of 2"``, ``"squares"`` or the first valid values of p.

    Decided from ``entry.valid(p)`` for p in :data:`LABEL_PS`.
    """
    valid = [p for p in LABEL_PS if entry.valid(p)]
    if valid == list(LABEL_PS):
        return "any"
    if valid == [p for p in LABEL_PS if p & (p - 1) == 0]:
        return "powers of 2"
    if valid == [p for p in LABEL_PS if math.isqrt(p) ** 2 == p]:
        return "squares"
    if not valid:
        return "none"
    return ", ".join(map(str, valid[:5])) + (", ..." if len(valid) > 5 else "")


def _formula(entry) -> str:
    # The first paragraph of the cost function's docstring states the closed form.
    paragraph = inspect.cleandoc(entry.cost.__doc__ or "").split("\n\n")[0]
    return " ".join(paragraph.split()).rstrip(".") or "-"


def _network_name(entry, p) -> str:
    # The network the closed form is stated for; at p itself if p is valid, else at a p that is.
    at = p if entry.valid(p) else next(q for q in LABEL_PS if entry.valid(q))
    return type(entry.network_for(at)).__name__


def _row(entry, p, m, ts, tw, simulate, seed) -> SummaryRow:
    time = simulated = correct = None
    model = entry.default_model(ts, tw)
    params = optimal_params(entry, p, m, model) if entry.valid(p) else {}
    if entry.accepts(p, m, **params):            # e.g. Rabenseifner needs m >= p
        time = entry.predict(p, m, model, **params)
        if simulate:
            inputs = entry.make_inputs(p, m, seed, **params)
            run = entry.simulate(p, m, inputs=inputs, model=model, trace=False, **params)
            simulated, correct = run.time, run.results == entry.expected(inputs, **params)
    return SummaryRow(operation=entry.operation, name=entry.name,
                      network=_network_name(entry, p),
                      ports=entry.ports, time=time, relation="=" if entry.exact else "<=",
                      formula=_formula(entry), valid_p=valid_p_label(entry),
                      source=entry.source, params=params, simulated=simulated, correct=correct,
                      tex=entry.tex)


def summary_table(operations, p: int, m: int, *, ts: float = 100.0, tw: float = 1.0,
                  simulate: bool = False, seed: int = 0) -> SummaryTable:
    """Every catalog entry of ``operations`` with its time at ``p`` PEs and ``m`` words.

    Parameters
    ----------
    operations : str or sequence of str
        The operations to list (``"broadcast"``, ``("allgather", "alltoall")``, ...),
        in the order the table groups them; within one operation the catalog's
        order.  An unknown operation raises ValueError naming it.
    p, m : int
        Where the closed forms are evaluated; an algorithm that cannot run on p
        PEs with m words is listed with time ``-``.
    ts, tw : float
        Start-up and per-word time; each algorithm uses its own port model.
    simulate : bool
        Also simulate every valid algorithm once on random inputs (``seed``) and
        report its time (``row.correct``: whether every PE's result is right; the
        table says so only where one is not).

    Examples
    --------
    >>> table = summary_table(["allgather", "alltoall"], p=16, m=64, simulate=True)
    >>> all(row.correct for row in table.rows if row.time is not None)
    True
    """
    if isinstance(operations, str):
        operations = [operations]
    entries = catalog().values()
    known = {entry.operation for entry in entries}
    for operation in operations:
        if operation not in known:
            raise ValueError(f"no algorithm implements {operation!r}; "
                             f"the catalog has {sorted(known)}")
    rows = [_row(entry, p, m, ts, tw, simulate, seed)
            for operation in operations for entry in entries if entry.operation == operation]
    return SummaryTable(rows, p, m, ts, tw, simulate)
