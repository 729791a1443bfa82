"""report/book/execution.py: how an executed chapter is written to disk."""

from __future__ import annotations

import json

import nbformat

from lmgeometry.report.book.execution import notebook_bytes


def _notebook_with_bundle() -> nbformat.NotebookNode:
    bundle = {"data": [{"x": list(range(50)), "y": [0.5] * 50, "name": "caf\u00e9 <s>"}],
              "layout": {"updatemenus": [{"buttons": [{"args": [{"visible": [True, False]}]}]}]}}
    out = nbformat.v4.new_output("display_data", data={
        "application/vnd.plotly.v1+json": bundle,
        "application/json": {"a": [1, 2, 3]},
        "text/html": "<div>one</div>\n<div>two</div>",
        "text/plain": "<Figure>"})
    cell = nbformat.v4.new_code_cell("show(fig)", outputs=[out])
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T"), cell])


def test_json_outputs_take_one_line_and_the_file_reads_back_to_the_same_notebook() -> None:
    nb = _notebook_with_bundle()
    data = notebook_bytes(nb)
    text = data.decode()
    indented = nbformat.writes(nb) + "\n"
    assert len(data) < len(indented.encode()) / 2
    # the same notebook as nbformat's own file, to the value
    assert nbformat.reads(text, as_version=4) == nbformat.reads(indented, as_version=4)
    assert json.loads(text) == json.loads(indented)
    # each JSON output on one line; text outputs still split into lines, as nbformat does
    [bundle_line] = [line for line in text.splitlines() if "vnd.plotly" in line]
    assert '"x":[0,1,2' in bundle_line and "caf\u00e9 <s>" in bundle_line
    assert any(line.strip() == '"<div>one</div>\\n",' for line in text.splitlines())
    # the notebook passed in is left as it was
    assert isinstance(nb.cells[1].outputs[0].data["application/vnd.plotly.v1+json"], dict)
    assert nb.cells[1].outputs[0].data["text/html"] == "<div>one</div>\n<div>two</div>"


def test_a_notebook_without_json_outputs_is_written_as_nbformat_writes_it() -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "print(1)", outputs=[nbformat.v4.new_output("stream", name="stdout", text="1\n2\n")])])
    assert notebook_bytes(nb) == (nbformat.writes(nb) + "\n").encode()
