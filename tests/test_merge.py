"""transpile.io.merge: hand edits (generated -> edited) carried onto a new conversion."""
from __future__ import annotations

import random

import pytest

from transpile.io.merge import carry_hand_edits, merge_lines

GENERATED = "import mindspore as ms\nfrom mindspore import ops\n\n\ndef f(x):\n    y = ops.relu(input=x)\n    return y\n\n\ndef g(x):\n    return ops.exp(input=x)\n"


def test_no_hand_edit_gives_the_new_conversion() -> None:
    new = GENERATED.replace("ops.exp(input=x)", "ops.exp(input=x) + 1")
    merged = merge_lines(GENERATED, GENERATED, new)
    assert merged.clean and merged.text == new


def test_no_new_change_keeps_the_hand_edit() -> None:
    edited = GENERATED.replace("    return y\n", "    return y * 2  # doubled by hand\n")
    merged = merge_lines(GENERATED, edited, GENERATED)
    assert merged.clean and merged.text == edited


def test_changes_in_different_places_both_apply() -> None:
    edited = GENERATED.replace("    y = ops.relu(input=x)\n", "    y = ops.relu(input=x)\n    y = y.clip(0, 6)\n")
    new = GENERATED.replace("ops.exp(input=x)", "ops.exp(x)")
    merged = merge_lines(GENERATED, edited, new)
    assert merged.clean
    assert "    y = y.clip(0, 6)\n" in merged.text and "ops.exp(x)" in merged.text
    assert merged.text == new.replace("    y = ops.relu(input=x)\n", "    y = ops.relu(input=x)\n    y = y.clip(0, 6)\n")


def test_deleted_and_inserted_lines_apply() -> None:
    edited = GENERATED.replace("from mindspore import ops\n", "from mindspore import ops\nimport numpy as np\n")
    edited = edited.replace("\n\ndef g(x):\n    return ops.exp(input=x)\n", "")
    new = GENERATED.replace("    y = ops.relu(input=x)\n", "    y = ops.relu(x)\n")
    merged = merge_lines(GENERATED, edited, new)
    assert merged.clean
    assert merged.text == edited.replace("    y = ops.relu(input=x)\n", "    y = ops.relu(x)\n")


def test_the_same_change_on_both_sides_is_taken_once() -> None:
    both = GENERATED.replace("ops.exp(input=x)", "ops.exp(x)")
    merged = merge_lines(GENERATED, both, both)
    assert merged.clean and merged.text == both


def test_different_changes_to_the_same_line_conflict() -> None:
    edited = GENERATED.replace("ops.exp(input=x)", "ops.exp(x) * 2")
    new = GENERATED.replace("ops.exp(input=x)", "ops.exp(input=x, out=None)")
    merged = merge_lines(GENERATED, edited, new)
    assert not merged.clean and merged.conflicts == 1 and merged.text is None


def test_two_separate_conflicts_are_counted() -> None:
    edited = GENERATED.replace("ops.exp(input=x)", "A").replace("ops.relu(input=x)", "B")
    new = GENERATED.replace("ops.exp(input=x)", "C").replace("ops.relu(input=x)", "D")
    assert merge_lines(GENERATED, edited, new).conflicts == 2


def test_line_endings_and_a_missing_last_newline_survive() -> None:
    generated = "a = 1\r\nb = 2\r\nc = 3"
    edited = "a = 1\r\nb = 2\r\nc = 30"
    new = "a = 10\r\nb = 2\r\nc = 3"
    assert merge_lines(generated, edited, new).text == "a = 10\r\nb = 2\r\nc = 30"


@pytest.mark.parametrize("seed", range(30))
def test_edits_of_one_side_alone_come_out_exactly(seed: int) -> None:
    """Random line edits on one side, none on the other: the merge is that side."""
    rng = random.Random(seed)
    base = [f"line {i}\n" for i in range(rng.randint(0, 25))]
    changed = list(base)
    for _ in range(rng.randint(1, 6)):
        where = rng.randint(0, len(changed))
        if changed and rng.random() < 0.4:
            del changed[min(where, len(changed) - 1)]
        else:
            changed.insert(where, f"new {rng.random()}\n")
    base_text, changed_text = "".join(base), "".join(changed)
    assert merge_lines(base_text, changed_text, base_text).text == changed_text
    assert merge_lines(base_text, base_text, changed_text).text == changed_text


def test_changes_to_adjacent_lines_conflict() -> None:
    """As in diff3 and git: no stable line between the two changes, no way to order them."""
    assert merge_lines("a\nb\nc\n", "a\nB\nc\n", "A\nb\nc\n").conflicts == 1


NEW = GENERATED.replace("ops.exp(input=x)", "ops.exp(x)").encode()
BASE = GENERATED.encode()


def test_without_an_earlier_run_or_a_hand_edit_the_conversion_is_written() -> None:
    assert carry_hand_edits(NEW, None, None).write == NEW
    assert carry_hand_edits(NEW, None, NEW).write is None  # already what the conversion gives
    kept = carry_hand_edits(NEW, None, BASE)  # a file there, no record of writing it: never overwritten
    assert kept.write is None and kept.conflict and kept.unrecorded
    assert carry_hand_edits(NEW, BASE, None).write == NEW
    assert carry_hand_edits(NEW, BASE, BASE).write == NEW


def test_a_hand_edit_is_merged_or_kept() -> None:
    edited = GENERATED.replace("    return y\n", "    return y + 1\n").encode()
    merged = carry_hand_edits(NEW, BASE, edited)
    assert merged.merged and not merged.conflict
    assert merged.write == NEW.replace(b"    return y\n", b"    return y + 1\n")
    kept = carry_hand_edits(BASE, BASE, edited)
    assert kept.merged and kept.write is None


def test_a_conflicting_hand_edit_keeps_the_file() -> None:
    edited = GENERATED.replace("ops.exp(input=x)", "ops.exp(x) * 3").encode()
    result = carry_hand_edits(NEW, BASE, edited)
    assert result.conflict and result.write is None and not result.merged


def test_bytes_that_are_not_utf8_are_not_merged() -> None:
    result = carry_hand_edits(b"new \xff\n", b"old \xff\n", b"edited \xff\n")
    assert result.conflict and result.write is None
