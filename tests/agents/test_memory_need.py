"""The memory check (agents/memory_need.py) on hand-made solver paths whose answer is known:
where a value is shown, where it is used, and whether it has left a window of K observations.
No device: each step is a small UI XML string and an action."""

from __future__ import annotations

import pytest
from django.test import override_settings

from agents.memory_need import SolverStep, carries, measure, number_value, shows, window
from trajectories.uixml import quote_attribute

CODE = "FC-643615"
PRICE = "$207.49"


def screen(*texts: str, desc: str = "") -> str:
    """A one-app screen whose text views say ``texts`` (and a button described ``desc``)."""
    nodes = "".join(
        f'<node index="{i}" text={quote_attribute(t)} resource-id="com.waypoint.x:id/t{i}" '
        f'class="android.widget.TextView" package="com.waypoint.x" content-desc="" '
        f'bounds="[0,{100 * i}][540,{100 * i + 90}]" />'
        for i, t in enumerate(texts)
    )
    if desc:
        nodes += (
            f'<node index="99" text="" resource-id="" class="android.widget.Button" '
            f'package="com.waypoint.x" content-desc={quote_attribute(desc)} '
            f'bounds="[0,1100][540,1190]" />'
        )
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
        '<hierarchy rotation="0"><node index="0" text="" resource-id="" '
        'class="android.widget.FrameLayout" package="com.waypoint.x" content-desc="" '
        f'bounds="[0,0][540,1200]">{nodes}</node></hierarchy>'
    )


BLANK = screen("Home")
TAP = {"type": "click", "x": 10, "y": 10}


def path(length: int, shown: dict[int, str], actions: dict[int, dict]) -> list[SolverStep]:
    """``length`` steps: the screen before step i shows ``shown[i]`` (else nothing of note),
    step i does ``actions[i]`` (else a tap)."""
    return [
        SolverStep(screen("Home", shown[i]) if i in shown else BLANK, actions.get(i, TAP))
        for i in range(length)
    ]


def typed(text: str) -> dict:
    return {"type": "type", "text": text}


def answered(text: str) -> dict:
    return {"type": "answer", "text": text}


def one(steps, value=CODE, k=5):
    result = measure(steps, {"freshcart.order_number": value}, k)
    [need] = result.values
    return result, need


def test_a_value_shown_at_step_2_and_typed_at_step_9_needs_memory_at_distance_7():
    steps = path(11, {2: f"Order {CODE}"}, {9: typed(CODE), 10: answered("done")})
    result, need = one(steps)
    [use] = need.uses
    assert (use.step, use.by, use.last_shown, use.distance) == (9, "type", 2, 7)
    assert need.shown_at == [2]
    assert need.needs_memory and result.needs_memory
    assert result.steps == 11 and result.k == 5


def test_shown_again_at_step_7_it_is_in_the_window():
    steps = path(11, {2: f"Order {CODE}", 7: CODE}, {9: typed(CODE), 10: answered("done")})
    result, need = one(steps)
    assert need.shown_at == [2, 7]
    assert [(u.last_shown, u.distance) for u in need.uses] == [(7, 2)]
    assert not need.needs_memory and not result.needs_memory


@pytest.mark.parametrize(
    ("shown_at", "needs"),
    [(4, True), (5, False)],  # used at 9 with K=5: the window is the screens before steps 5..9
)
def test_the_window_holds_the_current_screen_and_the_k_minus_1_before_it(shown_at, needs):
    steps = path(10, {shown_at: CODE}, {9: answered(CODE)})
    result, need = one(steps, k=5)
    assert need.uses[0].distance == 9 - shown_at
    assert need.needs_memory is needs and result.needs_memory is needs


@pytest.mark.parametrize(("k", "needs"), [(4, True), (5, False), (6, False)])
def test_a_distance_of_exactly_4_needs_memory_at_k_4_only(k, needs):
    steps = path(10, {5: CODE}, {9: answered(CODE)})
    _, need = one(steps, k=k)
    assert need.uses[0].distance == 4
    assert need.needs_memory is needs


def test_a_value_on_the_screen_it_is_used_on_has_distance_0():
    steps = path(3, {2: CODE}, {2: answered(CODE)})
    _, need = one(steps, k=1)
    assert need.uses[0].distance == 0 and not need.needs_memory


def test_a_compared_value_is_used_at_the_answer_step():
    steps = path(12, {1: "AeroSound X5 $180.00", 3: f"AeroSound X5 {PRICE}"}, {})
    steps[10] = SolverStep(BLANK, answered("FreshCart"))
    steps[11] = SolverStep(BLANK, {"type": "terminate", "status": "success"})
    result = measure(steps, {"freshcart.price": "$180.00", "megamart.price": PRICE}, 5)
    fresh, mega = result.values
    assert [(u.step, u.by, u.last_shown, u.distance) for u in fresh.uses] == [(10, "final", 1, 9)]
    assert [(u.step, u.by, u.last_shown, u.distance) for u in mega.uses] == [(10, "final", 3, 7)]
    assert result.needs_memory
    # Without an answer action, the episode's last step is the answer step.
    steps[10] = SolverStep(BLANK, TAP)
    result = measure(steps, {"megamart.price": PRICE}, 5)
    assert [(u.step, u.distance) for u in result.values[0].uses] == [(11, 8)]


def test_a_value_never_shown_before_its_use_is_reported_so_not_as_distance_0():
    steps = path(10, {9: CODE}, {6: typed(CODE), 9: answered(CODE)})
    result, need = one(steps)
    first, second = need.uses
    assert (first.step, first.last_shown, first.distance) == (6, None, None)
    assert not first.needs_memory
    assert (second.step, second.distance) == (9, 0)
    assert not need.never_shown and need.distance == 0
    steps = path(10, {}, {9: answered(CODE)})
    result, need = one(steps)
    assert need.never_shown and need.distance is None
    assert not need.needs_memory and not result.needs_memory


def test_every_use_counts_one_beyond_the_window_is_enough():
    # typed into a message at 3 (shown at 1: in the window), answered at 12 (out of it).
    steps = path(13, {1: CODE}, {3: typed(f"Your order is {CODE}"), 12: answered(CODE)})
    result, need = one(steps)
    assert [(u.step, u.distance, u.needs_memory) for u in need.uses] == [
        (3, 2, False),
        (12, 11, True),
    ]
    assert need.needs_memory and result.needs_memory and need.distance == 11


def test_an_instance_needs_memory_when_one_of_its_values_does():
    steps = path(10, {1: "Code 3547", 8: "Room 4B"}, {9: answered("3547 in Room 4B")})
    result = measure(steps, {"a.code": "3547", "b.room": "Room 4B"}, 5)
    assert [v.needs_memory for v in result.values] == [True, False]
    assert result.needs_memory
    result = measure(steps, {"b.room": "Room 4B"}, 5)
    assert not result.needs_memory


def test_a_content_desc_shows_a_value_too():
    steps = [SolverStep(screen("Home", desc=f"Order {CODE}"), TAP)] + path(
        8, {}, {7: answered(CODE)}
    )
    _, need = one(steps)
    assert need.shown_at == [0] and need.uses[0].distance == 8


def test_showing_is_a_whole_word_or_number_of_a_visible_element():
    assert shows(["Lima 7°"], "7°") and not shows(["Porto 17°"], "7°")
    assert shows(["20 seats left"], "20") and not shows(["$20.49"], "20")
    assert not shows(["1,200 points"], "200") and not shows(["120"], "20")
    assert shows(["Your code:  mega7404 "], "MEGA7404") and not shows(["XMEGA7404"], "MEGA7404")
    assert shows(["Room\n4B"], "Room 4B")
    assert shows(["Total $180.00 incl."], "$180.00") and not shows(["$180.001"], "$180.00")
    # An element of no area is not on the screen.
    hidden = screen("Home").replace("</node></hierarchy>", "")
    hidden += (
        f'<node index="5" text="{CODE}" resource-id="" class="android.widget.TextView" '
        'package="com.waypoint.x" content-desc="" bounds="[0,0][0,0]" /></node></hierarchy>'
    )
    assert measure([SolverStep(hidden, answered(CODE))], {"x.y": CODE}, 5).values[0].shown_at == []


def test_a_number_is_used_when_the_text_carries_its_number_as_the_grading_reads_it():
    assert number_value("$1,234.50") == 1234.5 and number_value("7°") == 7.0
    assert number_value("76%") == 76.0
    assert None is number_value("FC-643615") is number_value("14:30") is number_value("17D")
    assert carries("1234.5", "$1,234.50") and carries("It is 7 degrees", "7°")
    assert carries("$180", "$180.00") and not carries("$18.00", "$180.00")
    assert carries(f"Your order is {CODE}.", CODE) and not carries("FC-6436150", CODE)
    assert not carries("14:35", "14:30") and not carries("643615", CODE)


def test_a_bad_dump_shows_nothing_and_k_must_be_positive():
    steps = [SolverStep("not xml", TAP), SolverStep(None, answered(CODE))]
    assert measure(steps, {"x.y": CODE}, 5).values[0].never_shown
    with pytest.raises(ValueError, match="at least one observation"):
        measure(steps, {"x.y": CODE}, 0)


def test_k_is_a_setting():
    assert window() == 5
    with override_settings(WAYPOINT_MEMORY_WINDOW=3):
        assert window() == 3


def test_what_the_device_declared_replaces_the_xml_when_given():
    """The XML shows "Direct" on every flight; the device says which screen shows this one's."""
    steps = [
        SolverStep(screen("WY380 Direct"), TAP, declared=frozenset({"flights.stops_wy380"})),
        *[SolverStep(screen("WY696 Direct"), TAP, declared=frozenset()) for _ in range(5)],
        SolverStep(screen("Answers"), answered("3"), declared=frozenset()),
    ]
    by_xml = measure(
        [SolverStep(s.xml, s.action) for s in steps], {"flights.stops_wy380": "Direct"}, 5
    )
    assert by_xml.values[0].shown_at == [0, 1, 2, 3, 4, 5] and not by_xml.needs_memory
    declared = measure(steps, {"flights.stops_wy380": "Direct"}, 5)
    [need] = declared.values
    assert need.shown_at == [0] and need.uses[0].distance == 6 and declared.needs_memory
