"""The strict pointing game over the clips both runs classify correctly, on hand-made records."""

from dissect.comparison import both_correct, pointing_on


def _rec(label, pred, hits):
    return {"label": label, "pred": pred, "scores": {"method": {"pointing": hits}}}


def test_both_correct_and_pointing_on_them():
    a = {
        "c0": _rec(0, 0, [True, False, None]),
        "c1": _rec(1, 1, [True, True]),
        "c2": _rec(2, 0, [False]),
        "c3": _rec(None, 1, [True]),
        "c4": _rec(1, 1, [False, False]),
    }
    b = {
        "c0": _rec(0, 0, [False, False, None]),
        "c1": _rec(1, 2, [True, True]),  # b misclassifies c1
        "c2": _rec(2, 2, [True]),
        "c3": _rec(None, 1, [True]),
        "c4": _rec(1, 1, [True, None]),
    }
    assert both_correct(a, b) == ["c0", "c4"]
    # frames with a box of c0 and c4: a hits 1 of 4, b 1 of 3
    assert pointing_on(a, ["c0", "c4"]) == 0.25
    assert pointing_on(b, ["c0", "c4"]) == 1 / 3
    assert pointing_on(a, []) is None
