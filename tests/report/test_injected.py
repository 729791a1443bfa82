"""A chapter run by papermill with a parameter it does not declare stops and names it
(issue 49: papermill only logged "Passed unknown parameter")."""

from __future__ import annotations

import pytest

from lmgeometry.errors import UsageError
from lmgeometry.report.injected import check_injected, injected_names

DECLARED = {"models": list[str], "n_boot": int, "results_path": str}


def test_injected_names_come_from_papermills_parameters_cell():
    history = ["", "models: list[str] = ['a']\nn_boot: int = 1000\n",
               "# Parameters\nn_bot = 50\nmodels = ['b']\nresults_path = 'x.json'\n",
               "globals().update(checked_parameters(globals()))"]
    assert injected_names(history) == ["n_bot", "models", "results_path"]
    assert injected_names(["x = 1", "# Parameters is a comment here\ny = 2"]) == []
    with pytest.raises(UsageError, match=r"unknown parameter n_bot: this chapter's parameters "
                                         r"are models, n_boot, results_path; .* -p n_bot"):
        check_injected(DECLARED, history)
    check_injected(DECLARED, ["# Parameters\nn_boot = 5\n"])  # declared: nothing raised
    check_injected(DECLARED, [])  # run by hand: no injected cell


def test_papermill_run_with_an_unknown_parameter_fails_naming_it(tmp_path):
    import nbformat
    import papermill

    from lmgeometry.report.book.execution import interpreter_kernel

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}
    params = nbformat.v4.new_code_cell("n_boot: int = 1000\nresults_path: str = 'r.json'")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(
        "from lmgeometry.chapters.common import checked_parameters\n"
        "globals().update(checked_parameters(globals()))\nprint('ran with', n_boot)")]
    source = tmp_path / "chapter.ipynb"
    nbformat.write(nb, source)
    with interpreter_kernel() as kernel:
        ok = papermill.execute_notebook(str(source), str(tmp_path / "ok.ipynb"),
                                        parameters={"n_boot": 50}, kernel_name=kernel,
                                        progress_bar=False)
        assert "ran with 50" in ok.cells[-1].outputs[0]["text"]
        with pytest.raises(papermill.PapermillExecutionError,
                           match="unknown parameter n_bot: this chapter's parameters are "
                                 "n_boot, results_path"):
            papermill.execute_notebook(str(source), str(tmp_path / "bad.ipynb"),
                                       parameters={"n_bot": 50}, kernel_name=kernel,
                                       progress_bar=False)
