"""Two instructors saving at once: the editor's save is a compare-and-swap under a file lock, so
of two saves from the same version one wins and the other is told in words and keeps its edits.
The editor's preset list is paged."""

from __future__ import annotations

import threading

import pytest

from tests._instructor import params_copy, router_only, signed_in, two_point_beta  # noqa: F401
from ui.kit import spec
from ui.teaching import editor
from ui.teaching import params_file as pf


@pytest.mark.parametrize("round_", range(8))
def test_two_saves_at_once_one_wins_the_other_is_refused(params_copy, round_):  # noqa: F811
    text, h = pf.read(params_copy)
    edits = [pf.apply_edits(text, "two_point", {"beta": {"default": d}}, None) for d in (2.0, 3.0)]
    barrier, out = threading.Barrier(2), [None, None]

    def go(i):
        barrier.wait()
        try:
            pf.save(params_copy, edits[i], h)
            out[i] = "saved"
        except pf.Conflict:
            out[i] = "conflict"

    threads = [threading.Thread(target=go, args=(i,)) for i in (0, 1)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(out) == ["conflict", "saved"]
    winner = out.index("saved")
    assert params_copy.read_text() == edits[winner]
    assert pf.backup_path(params_copy).read_text() == text  # undo brings back the version both saw


def test_the_loser_is_told_and_keeps_its_edits(params_copy):  # noqa: F811
    a, b = signed_in(editor.URL_PATH), signed_in(editor.URL_PATH)
    a.number_input(key="ed:two_point:beta:default").set_value(2.0).run()
    b.number_input(key="ed:two_point:beta:default").set_value(3.0).run()
    a.button(key="_ed_save").click().run()
    b.button(key="_ed_save").click().run()
    assert two_point_beta(params_copy) == {"default": 2.0}
    assert any("Not saved" in e.value for e in b.error)
    assert b.number_input(key="ed:two_point:beta:default").value == 3.0


def test_preset_list_is_paged(params_copy):  # noqa: F811
    body = params_copy.read_text() + "".join(
        f"\n[hemisphere.presets.p{i}]\ntitle = 'p{i}'\nvalues = {{ n = 64 }}\n" for i in range(45)
    )
    params_copy.write_text(body)
    at = signed_in(editor.URL_PATH)
    at.selectbox(key="_ed_stem").set_value("hemisphere").run()
    assert not at.exception
    rows = [t for t in at.text_input if t.key and t.key.startswith("edp:hemisphere:") and t.key.endswith(":id")]
    assert 0 < len(rows) <= editor.PAGE_SIZE
    assert spec.MAX_PRESETS <= 50
