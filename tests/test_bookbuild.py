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



def test_a_fresh_clone_orders_quick_chapters_by_the_committed_times(tmp_path, monkeypatch):
    from companion import parallel, records

    monkeypatch.setattr(parallel, "cache_timings_file", lambda: tmp_path / "cache" / "timings.json")
    committed = {"chapters": {"fig2": {"quick_s": 12.0}, "fig5": {"quick_s": 394.0},
                              "t-d1": {"quick_s": 226.0}}}
    monkeypatch.setattr(records, "load_costs", lambda: committed)
    ids = ["fig2", "t-d1", "fig5"]
    assert bookbuild.chapter_order(ids, "quick", tmp_path / "_build") == ["fig5", "t-d1", "fig2"]
    # the committed times are quick times: other profiles keep the book order until measured
    assert bookbuild.chapter_order(ids, "smoke", tmp_path / "_build") == ids
    # a time measured by this build wins over the committed one
    parallel.record_timing([tmp_path / "_build" / bookbuild.TIMINGS], "quick", "fig2", 999.0)
    assert bookbuild.chapter_order(ids, "quick", tmp_path / "_build")[0] == "fig2"


def test_a_new_paper_record_reexecutes_only_its_chapter(tmp_path, monkeypatch):
    """A chapter page shows its recorded paper result from its execution: a new record must not be
    hidden behind the execution cache, and nothing else is executed again."""
    from companion import bookbuild, records

    monkeypatch.setattr(records, "results_dir", lambda profile: tmp_path / "results" / profile)
    build = tmp_path / "_build"
    lines: list[str] = []

    def run():
        lines.clear()
        assert bookbuild.execute_chapters(build, "smoke", workers=1, only=["f-arch"], log=lines.append) == []
        return " ".join(lines)

    assert "executing 1 chapters" in run()
    assert "all 1 chapters are in the execution cache" in run()
    path = records.record_path("f-arch", "paper")
    path.parent.mkdir(parents=True)
    path.write_text('{"chapter": "f-arch", "claims": []}')
    assert "executing 1 chapters" in run()
    assert "all 1 chapters are in the execution cache" in run()
    assert len(bookbuild.registry_digest()) == 64
