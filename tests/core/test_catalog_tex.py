r"""Every catalog entry states its closed form as TeX (``register(tex=...)``), for the summary tables.

The TeX is the formula of the cost function's docstring in the book's
notation (t_s, t_w, p, m, k, \lceil\log_2 p\rceil, the symbols the docstring
defines); MathJax 3 typesets it, so it uses only a small set of commands, has
no ``$`` and its braces balance.  Its symbols are checked against the cost
function: a formula with t_w grows with m, one with k belongs to an entry
with packets, and every other letter is one the docstring uses.
"""
import importlib
import re

import pytest

from collective_lib import CostModel, catalog

catalog_module = importlib.import_module("collective_lib.catalog")

#: The TeX commands MathJax 3 renders and every reader can read (the summary tables' whitelist).
ALLOWED_COMMANDS = {
    "lceil", "rceil", "lfloor", "rfloor", "log", "frac", "sqrt", "cdot", "min", "max", "sum",
    "bigl", "bigr", "Bigl", "Bigr", "left", "right", "alpha", "beta", "mathit", "text", "quad",
}
#: Commands that come in pairs, opener and closer.
PAIRS = [("lceil", "rceil"), ("lfloor", "rfloor"), ("bigl", "bigr"), ("Bigl", "Bigr"),
         ("left", "right")]
#: Letters every cost function has: its signature's p and m.
SIGNATURE = {"p", "m"}


def entries():
    return list(catalog())


def commands(tex):
    return re.findall(r"\\([a-zA-Z]+)", tex)


def symbols(tex):
    r"""The variables a formula names: t_s, t_w, t_h, ... and single letters (M' with its prime).

    Words in ``\text{...}`` are prose and ``\mathit{...}`` names a function
    (see :func:`function_names`); summation indices are bound, not symbols.
    """
    body = re.sub(r"\\(text|mathit)\{[^{}]*\}", " ", tex)
    body = re.sub(r"\\[a-zA-Z]+", " ", body)
    bound = set(re.findall(r"_\{([a-zA-Z])=", body))
    return set(re.findall(r"t_[a-z]|[A-Za-z]'?", body)) - bound


def function_names(tex):
    return set(re.findall(r"\\mathit\{([^{}]*)\}", tex))


def in_docstring(symbol, doc):
    """Whether ``symbol`` stands in ``doc`` as a name of its own (not inside a word)."""
    return re.search(rf"(?<![A-Za-z]){re.escape(symbol)}(?![A-Za-z])", doc) is not None


def small_p(entry):
    return next(p for p in (8, 9, 16) if entry.valid(p))


def cost(entry, p, m, ts=0.0, tw=0.0, th=0.0, **params):
    return entry.predict(p, m, CostModel(ts, tw, th, ports=entry.ports), **params)


def short_m(entry, p):
    """m = 1 where the entry accepts it, else the least m it accepts (one word per PE)."""
    return next(m for m in (1, p) if entry.accepts(p, m))


@pytest.mark.parametrize("name", entries())
def test_tex_is_well_formed(name):
    tex = catalog()[name].tex
    assert isinstance(tex, str) and tex.strip(), f"{name} has no tex"
    assert "$" not in tex, f"{name}: tex= is math without delimiters, got {tex!r}"
    assert not set("<>&") & set(tex), (
        f"{name}: the tables put the tex into HTML and Markdown as it is, so it has no <, > "
        f"or &: {tex!r}")
    depth = 0
    for char in tex:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0, f"{name}: a }} closes nothing in {tex!r}"
    assert depth == 0, f"{name}: unbalanced braces in {tex!r}"
    assert tex.count("(") == tex.count(")"), f"{name}: unbalanced parentheses in {tex!r}"
    used = commands(tex)
    assert set(used) <= ALLOWED_COMMANDS, (
        f"{name} uses {sorted(set(used) - ALLOWED_COMMANDS)}, outside the summary tables' "
        f"TeX commands {sorted(ALLOWED_COMMANDS)}")
    for opener, closer in PAIRS:
        assert used.count(opener) == used.count(closer), f"{name}: \\{opener} without \\{closer}"
    assert "alpha" not in used and "beta" not in used, (
        f"{name}: the catalog writes t_s and t_w, not Sanders' alpha and beta: {tex!r}")


@pytest.mark.parametrize("name", entries())
def test_tex_speaks_of_the_cost_functions_symbols(name):
    entry = catalog()[name]
    doc = entry.cost.__doc__ or ""
    found = symbols(entry.tex)
    packets = "k" in entry.params or entry.optimal_k is not None
    assert ("k" in found) == packets, (
        f"{name}: k, the number of packets, belongs in the formula exactly when the entry "
        f"has packets ({entry.tex!r}, params {sorted(entry.params)})")
    for symbol in found - SIGNATURE - {"k", "t_s", "t_w"}:      # t_s, t_w: checked by value
        spellings = (symbol, symbol.replace("_", ""))           # t_h is th in a docstring
        assert any(in_docstring(spelling, doc) for spelling in spellings), (
            f"{name}'s tex uses {symbol}, which its cost function's docstring never names: "
            f"{entry.tex!r}")
    for word in function_names(entry.tex):
        assert word in doc, f"{name}'s tex names {word}(), its cost's docstring does not"


@pytest.mark.parametrize("name", entries())
def test_the_terms_of_the_tex_are_those_of_the_cost(name):
    entry = catalog()[name]
    found = symbols(entry.tex)
    p = small_p(entry)
    m = short_m(entry, p)
    grows_with_m = cost(entry, p, 1000, tw=1.0) > cost(entry, p, m, tw=1.0)
    assert ("t_w" in found) == grows_with_m, (
        f"{name}: with ts = 0, tw = 1 the cost {'grows' if grows_with_m else 'does not grow'} "
        f"from m = {m} to m = 1000, but its tex {entry.tex!r} "
        f"{'lacks' if grows_with_m else 'has'} t_w")
    has_startups = cost(entry, p, 1000, ts=1.0) > 0
    assert ("t_s" in found) == has_startups, f"{name}: t_s and the cost disagree: {entry.tex!r}"
    if "t_h" in found:
        assert cost(entry, p, m, th=1.0) > cost(entry, p, m), f"{name}: t_h but no hop cost"
    if "k" in found:
        assert cost(entry, p, 1000, ts=1.0, tw=1.0, k=entry.params.get("k", 1) + 2) != \
            cost(entry, p, 1000, ts=1.0, tw=1.0, k=entry.params.get("k", 1)), (
            f"{name}: its tex has k but the cost does not depend on it")


@pytest.mark.parametrize("name, tex", [
    ("naive_broadcast", r"(p - 1)(t_s + t_w m)"),
    ("binomial_broadcast", r"\lceil \log_2 p \rceil (t_s + t_w m)"),
    ("hypercube_broadcast", r"(t_s + t_w m) \log_2 p"),
    ("pipelined_binary_tree_broadcast", r"(2L + 3(k - 1))\bigl(t_s + t_w \lceil m/k \rceil\bigr)"),
    ("binomial_gather", r"\lceil \log_2 p \rceil t_s + (p - 1) m t_w"),
    ("all_to_all_bc_mesh", r"2 t_s (\sqrt{p} - 1) + t_w m (p - 1)"),
])
def test_well_known_closed_forms(name, tex):
    assert catalog()[name].tex == tex


def test_symbols_reads_a_formula_as_a_reader_does():
    assert symbols(r"\sum_{i=0}^{\lceil \log_2 p \rceil - 1} (t_s + t_w m b_i)") == \
        {"p", "t_s", "t_w", "m", "b"}
    assert symbols(r"(k + 2H + [p \text{ odd}])\bigl(t_s + t_w \lceil m/k \rceil\bigr)") == \
        {"k", "H", "p", "t_s", "t_w", "m"}
    assert symbols(r"(2^d - 1)(t_s + t_w M')") == {"d", "t_s", "t_w", "M'"}
    assert function_names(r"\bigl(p - \mathit{isEven}(p)\bigr)") == {"isEven"}


def _made_up(me, p, data):
    """Returns its input."""
    return data
    yield


@pytest.mark.parametrize("tex, error, message", [
    (None, TypeError, "register\\(\\) of 'made_up_tex' needs tex="),
    ("", ValueError, "tex= of 'made_up_tex' must be a non-empty string"),
    ("$p - 1$", ValueError, "tex= of 'made_up_tex' must be .* without delimiters"),
    (3, ValueError, "tex= of 'made_up_tex'"),
])
def test_register_requires_tex(monkeypatch, tex, error, message):
    monkeypatch.setattr(catalog_module, "_ALGORITHMS", dict(catalog_module._ALGORITHMS))
    extra = {} if tex is None else {"tex": tex}
    decorate = catalog_module.register(operation="broadcast", exact=True, source="none",
                                       cost=lambda p, m, model, **_: 0.0, name="made_up_tex",
                                       **extra)
    with pytest.raises(error, match=message):
        decorate(_made_up)
    assert "made_up_tex" not in catalog_module._ALGORITHMS
