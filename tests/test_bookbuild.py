import json

import nbformat

from companion import bookbuild


def test_stderr_outputs_are_found(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="fine\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="UserWarning: careful\nmore\n")]
    nb.cells = [cell]
    folder = tmp_path / "_build" / "jupyter_execute" / "notebooks" / "demo"
    folder.mkdir(parents=True)
    (folder / "ch.ipynb").write_text(json.dumps(nb))
    assert bookbuild.stderr_outputs(tmp_path / "_build") == ["notebooks/demo/ch.ipynb: UserWarning: careful"]


def test_clean_build_has_none(tmp_path):
    assert bookbuild.stderr_outputs(tmp_path / "_build") == []
