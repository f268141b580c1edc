"""The three architectures are wired as the Figure 7 caption describes (read off built models)."""

from companion.aitken2021.models import architecture_table


def test_wiring_matches_the_figure_7_caption():
    n = 16
    t = architecture_table(hidden=n).set_index("architecture")
    # AED's readout takes the decoder output and the context; VED's the decoder state; AO's the context
    assert t.loc["AED", "readout input width"] == 2 * n
    assert t.loc["VED", "readout input width"] == n
    assert t.loc["AO", "readout input width"] == n
    # only AO adds positional encoding and drops recurrence; only VED has no attention
    assert t["positional encoding"].to_dict() == {"VED": False, "AED": False, "AO": True}
    assert t["recurrent encoder/decoder"].to_dict() == {"VED": True, "AED": True, "AO": False}
    assert t["attention"].to_dict() == {"VED": False, "AED": True, "AO": True}
    assert not t["readout bias"].any()
