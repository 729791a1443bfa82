"""The number formatting of generated sentences (lmgeometry.report.prose)."""

import doctest
import math

import nbclient
import nbformat

from lmgeometry.report import prose
from lmgeometry.report.prose import (
    layer_ranges,
    layers_phrase,
    number,
    pct,
    plural,
    points,
    span,
)


def test_layer_ranges_join_runs():
    assert layer_ranges([0, 1, 2, 5, 7, 8]) == "0-2, 5, 7-8"
    assert layer_ranges([9, 2, 3, 4, 7, 10]) == "2-4, 7, 9-10"
    assert layer_ranges([]) == ""
    assert layers_phrase([3]) == "layer 3"
    assert layers_phrase([3, 4, 5, 9]) == "layers 3-5, 9"


def test_span_collapses_equal_ends():
    assert span(0.081, 0.079, ".2f") == "0.08"
    assert span(0.46, 0.65, ".2f") == "0.46 to 0.65"
    assert span(0.456, 0.651, ".0%") == "46% to 65%"
    assert span(1.0, 2.0, lambda x: number(x, 1), sep="-") == "1.0-2.0"


def test_numbers_percentages_and_plurals():
    assert number(math.nan) == "n/a"
    assert number(0.0001) == "1.0e-04"
    assert number(0.0) == "0.00"
    assert number(1.234, 1) == "1.2"
    assert pct(0.8125) == "81%" and pct(0.8125, 1) == "81.2%"
    assert points(0.031) == "+3.1 points" and points(-0.2) == "-20.0 points"
    assert plural(1, "layer") == "1 layer" and plural(2, "layer") == "2 layers"
    assert plural(2, "child", "children") == "2 children"
    assert plural(2, "layer", count=False) == "layers"


def test_glue_values_doctest_runs_outside_a_kernel():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for test in finder.find(prose.glue_values, "glue_values", globs={**vars(prose)}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_glue_values_in_a_kernel_glue_markdown_for_myst_nb():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from lmgeometry.report.prose import glue_values\n"
        "glue_values(n_sentences=12000, ok=True, share=0.25, name='x')")]
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=None).execute()
    outputs = nb.cells[0].outputs
    assert all(o.output_type == "display_data" for o in outputs)  # nothing else on the page
    glued = {o.metadata["scrapbook"]["name"]:
             o.data[o.metadata["scrapbook"]["mime_prefix"] + "text/markdown"] for o in outputs}
    assert glued == {"n_sentences": "12,000", "ok": "True", "share": "0.25", "name": "x"}
