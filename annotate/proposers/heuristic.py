"""The proposer that needs no model: segments, memory targets and anchors from the screens.

Subgoals start where the foreground app changes. The home screen and the app drawer are not an
app of the task: leaving an app for them (Home, or Back from an app's first screen), and every
step there (swipes in the drawer included), up to the tap that brings an app to the front, is
one subgoal "Open X" — as is an open-app action from the home screen. Inside an app, what a
visit is for (a look-up, a form filled and sent, a note written) is one subgoal; one ends after
a text entry submitted with Enter and after a Back that leaves a screen where a remembered
value was read (the look-up is done), and in a long run a sharp change of activity and screen
structure or a new text entry starts one. The answer starts the last one. A subgoal succeeded
when its end screen differs from its start.

Memory targets: a value typed or answered at a later step that was visible as text (not in an
input field) on an earlier screen, and was not typed before it appeared there. App names and
values the goal itself states are not carried from a screen, so they are never targets. A value
the virtual device says a screen shows (its ``visible_memory``) counts even when it does not
look like one (a password of plain letters) or the dump glues it to its neighbour. It is encoded
on the screen that shows it best before it is used, and retrieved by every step that types or
answers it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from trajectories.uixml import UIElement, UITree, UIXmlError, parse_ui_xml, structure_similarity

from .base import Episode, Proposed

ENTER_KEYS = ("KEYCODE_ENTER", "66", "KEYCODE_NUMPAD_ENTER", "KEYCODE_SEARCH")
FINISHING = ("answer", "terminate")
SHARP_CHANGE = 0.25  # structure similarity below which a screen "changes sharply"
LONG_RUN = 8  # a sharp change starts a subgoal only in a run at least this long
_TOKEN = re.compile(r"[^\s,;!?\"'()\[\]<>]+")
_CURRENCY = "$€£¥"


@dataclass
class _Screen:
    package: str
    activity: str
    xml: bytes | None
    tree: UITree | None
    tokens: dict[str, UIElement]  # memorable token -> the element showing it best
    labels: dict[str, str]  # element path -> the label beside it ("Price")
    declared: dict[str, dict[str, Any]]  # value -> the variable the device says is shown


def tokens_of(text: str) -> list[str]:
    return [t.rstrip(".:") for t in _TOKEN.findall(text) if t.rstrip(".:")]


def memorable(token: str) -> bool:
    """A token worth remembering: a number, a code, a price, a time — not an ordinary word."""
    if any(c.isdigit() for c in token):
        return True
    classes = sum(
        (
            any(c.islower() for c in token),
            any(c.isupper() for c in token),
            any(not c.isalnum() for c in token),
        )
    )
    return len(token) >= 6 and classes >= 2 and not token.istitle()


def normal(token: str) -> str:
    return token.lstrip(_CURRENCY).casefold()


def _alone(el: UIElement, token: str) -> bool:
    """The element shows the value and nothing else (a field, not a row mentioning it)."""
    return any(normal(t.strip().rstrip(".:")) == token for t in (el.text, el.content_desc))


def _is_launcher(package: str) -> bool:
    return "launcher" in package or package in ("com.google.android.apps.nexuslauncher",)


def app_label(package: str) -> str:
    return package.rsplit(".", 1)[-1].capitalize() if package else "the app"


def _app_names(episode: Episode, screens: list[_Screen]) -> dict[str, str]:
    """Each app's name as the episode shows it: the label of an open-app action, or the text of
    the home-screen icon tapped to bring the app to the front."""
    names: dict[str, str] = {}
    for i, action in enumerate(episode.actions):
        before, after = screens[i], screens[i + 1]
        label = ""
        if action.get("type") == "open_app":
            label = str(action.get("app_label") or "")
        elif (
            action.get("type") == "click"
            and "x" in action
            and _is_launcher(before.package)
            and before.tree is not None
        ):
            el = before.tree.element_at(action["x"], action["y"])
            label = (el.content_desc or el.text).strip() if el is not None else ""
        if label and after.package and not _is_launcher(after.package):
            names.setdefault(after.package, label)
    return names


def _launcher_labels(screens: list[_Screen]) -> set[str]:
    """The names under the icons of the home screen and the app drawer."""
    return {
        normal(text.strip())
        for screen in screens
        if _is_launcher(screen.package) and screen.tree is not None
        for el in screen.tree.elements
        if el.clickable
        for text in (el.text, el.content_desc)
        if text.strip()
    }


def _key_for(el: UIElement, value: str, label: str) -> str:
    """A key from the label beside the value, the text before it, or its resource-id."""
    before = el.text.split(value, 1)[0] if value in el.text else ""
    for name in (label, before, el.resource_id.partition(":id/")[2]):
        key = re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_")
        if key:
            return key
    return "value"


def _prominence(screen: _Screen, token: str) -> tuple[bool, int]:
    el = screen.tokens.get(token)
    return (el is None or not _alone(el, token), len(screen.tokens))


def _target(screen: _Screen, token: str, encode: int) -> dict[str, Any]:
    """A memory target of ``token`` read on ``screen``, with its evidence: the element that
    shows it, or where the device says the variable is when the dump does not show it alone."""
    el = screen.tokens.get(token)
    variable = screen.declared.get(token, {})
    if el is not None:
        shown = next(t for t in tokens_of(el.text or el.content_desc) if normal(t) == token)
        key = _key_for(el, shown, screen.labels.get(el.path, ""))
        evidence = {
            "bounds": list(el.bounds),
            "text": el.text or el.content_desc,
            "resource_id": el.resource_id,
            "path": el.path,
        }
    else:
        shown = str(variable["value"]).strip()
        key = "value"
        evidence = {"bounds": list(variable.get("bounds") or []), "text": shown}
    name = re.sub(r"[^a-z0-9]+", "_", str(variable.get("name", "")).casefold()).strip("_")
    return {
        "key": name or key,
        "value": shown,
        "encode_step": encode,
        "retrieve_steps": [],
        "evidence": evidence,
    }


class HeuristicProposer:
    name = "heuristic"
    prompt_version = "h2"
    model = ""

    def propose(self, episode: Episode) -> Proposed:
        screens = self._screens(episode)
        names = _app_names(episode, screens)
        targets = self._memory_targets(episode, screens, names)
        starts = self._starts(episode, screens, {m["encode_step"] for m in targets})
        subgoals = self._subgoals(episode, screens, starts, targets, names)
        anchors = self._anchors(episode, screens, targets, names)
        return Proposed(
            payload={"subgoals": subgoals, "memory_targets": targets, "anchors": anchors}
        )

    # ------------------------------------------------------------ screens

    def _screens(self, episode: Episode) -> list[_Screen]:
        parsed: dict[Any, tuple[UITree | None, dict[str, UIElement], dict[str, str]]] = {}
        out = []
        for view in episode.screens:
            if view.xml not in parsed:
                parsed[view.xml] = self._parse(view.xml)
            tree, tokens, labels = parsed[view.xml]
            declared = {
                normal(str(v["value"]).strip()): v
                for v in view.visible_memory
                if isinstance(v, dict) and str(v.get("value", "")).strip()
            }
            out.append(
                _Screen(view.package, view.activity, view.xml, tree, tokens, labels, declared)
            )
        return out

    @staticmethod
    def _parse(
        xml: bytes | None,
    ) -> tuple[UITree | None, dict[str, UIElement], dict[str, str]]:
        if not xml:
            return None, {}, {}
        try:
            tree = parse_ui_xml(xml)
        except UIXmlError:
            return None, {}, {}
        label_of: dict[str, str] = {}
        tokens: dict[str, UIElement] = {}
        labels: dict[str, str] = {}  # parent path -> the last plain text among its children
        for el in tree.elements:
            parent = el.path.rpartition("/")[0]
            plain = el.text.strip()
            if plain and not any(memorable(t) for t in tokens_of(plain)) and len(plain) < 40:
                labels[parent] = plain
            if el.editable:
                continue  # what is in an input field was typed, not read
            if parent in labels:
                label_of[el.path] = labels[parent]
            for text in (el.text, el.content_desc):
                for token in tokens_of(text):
                    if memorable(token):
                        key = normal(token)
                        # an element showing just the value beats a row mentioning it
                        alone = text.strip() == token
                        if key not in tokens or (alone and not _alone(tokens[key], key)):
                            tokens[key] = el
        return tree, tokens, label_of

    # ------------------------------------------------------------ memory targets

    def _memory_targets(
        self, episode: Episode, screens: list[_Screen], names: dict[str, str]
    ) -> list[dict[str, Any]]:
        declared = {value for screen in screens for value in screen.declared}
        # Not carried from a screen: what the goal itself says, and the apps' names.
        given = {normal(t) for t in tokens_of(episode.goal)} | _launcher_labels(screens)
        given |= {normal(name) for name in names.values()}
        typed_at: dict[str, list[int]] = {}
        for i, action in enumerate(episode.actions):
            if action.get("type") in ("type", "answer"):
                for token in tokens_of(str(action.get("text", ""))):
                    value = normal(token)
                    if (memorable(token) or value in declared) and value not in given:
                        typed_at.setdefault(value, []).append(i)
        found: dict[tuple[str, int], dict[str, Any]] = {}
        for token, steps in typed_at.items():
            first_typed = steps[0]
            for step in steps:
                shown_on = [
                    e
                    for e in range(step)
                    if token in screens[e].tokens or token in screens[e].declared
                ]
                # where it stands out: shown on its own, among the fewest other values
                encode = min(shown_on, key=lambda e: _prominence(screens[e], token), default=None)
                if encode is None or first_typed < encode:
                    continue  # never shown before, or shown because it was typed
                if (token, encode) not in found:
                    found[(token, encode)] = _target(screens[encode], token, encode)
                found[(token, encode)]["retrieve_steps"].append(step)
        targets = sorted(found.values(), key=lambda m: (m["encode_step"], m["key"]))
        keys = Counter(m["key"] for m in targets)
        seen: Counter[str] = Counter()
        for m in targets:
            if keys[m["key"]] > 1:
                seen[m["key"]] += 1
                m["key"] = f"{m['key']}_{seen[m['key']]}"
            m["retrieve_steps"] = sorted(set(m["retrieve_steps"]))
        return targets

    # ------------------------------------------------------------ segmentation

    def _starts(self, episode: Episode, screens: list[_Screen], encodes: set[int]) -> list[int]:
        actions = episode.actions
        n = len(actions)
        starts = {0}
        run_start = 0
        for i, action in enumerate(actions):
            kind = action.get("type")
            before, after = screens[i], screens[i + 1]
            if kind in FINISHING and (i == 0 or actions[i - 1].get("type") not in FINISHING):
                starts.add(i)
            elif _is_launcher(after.package) and not _is_launcher(before.package):
                starts.add(i)  # leaving for the home screen starts the switch to another app
            elif _is_launcher(before.package) and after.package and not _is_launcher(after.package):
                starts.add(i + 1)  # the app is in front: what is done in it comes next
            elif kind == "open_app" or (before.package and after.package != before.package):
                starts.add(i)  # straight from one app to another
                if i == 0:
                    starts.add(i + 1)  # opening an app is a subgoal of its own
            elif kind == "type" and str(action.get("text", "")).endswith("\n"):
                starts.add(i + 1)
            elif kind in ("enter", "key") and i > 0 and actions[i - 1].get("type") == "type":
                if kind == "enter" or str(action.get("keycode", "")) in ENTER_KEYS:
                    starts.add(i + 1)
            elif (
                kind == "back" and i in encodes and (i == 0 or actions[i - 1].get("type") != "type")
            ):
                # The value was read and its screen left: the look-up is over. (A Back right
                # after typing only hides the keyboard.)
                starts.add(i + 1)
            elif (
                i - run_start >= LONG_RUN
                and before.activity != after.activity
                and before.tree is not None
                and after.tree is not None
                and structure_similarity(before.tree, after.tree) < SHARP_CHANGE
            ):
                starts.add(i + 1)
            if (
                kind == "type"
                and i - run_start >= LONG_RUN
                and self._focused_field(actions[i - 1], screens[i - 1])
            ):
                starts.add(i - 1)  # a new entry after a long stretch in the same app
            run_start = max(s for s in starts if s <= i + 1)
        return sorted(s for s in starts if s < n)

    @staticmethod
    def _focused_field(action: dict[str, Any], screen: _Screen) -> bool:
        if action.get("type") != "click" or screen.tree is None or "x" not in action:
            return False
        el = screen.tree.element_at(action["x"], action["y"])
        return el is not None and el.editable

    # ------------------------------------------------------------ fields

    def _subgoals(
        self,
        episode: Episode,
        screens: list[_Screen],
        starts: list[int],
        targets: list[dict[str, Any]],
        names: dict[str, str],
    ) -> list[dict[str, Any]]:
        def name(package: str) -> str:
            return _name_of(package, names)

        n = len(episode.actions)
        subgoals = []
        for k, start in enumerate(starts):
            end = (starts[k + 1] - 1) if k + 1 < len(starts) else n - 1
            actions = episode.actions[start : end + 1]
            kinds = [a.get("type", "") for a in actions]
            first, last = screens[start], screens[end + 1]
            # What its steps brought on screen (its first screen is the previous one's result).
            read = [
                m["value"]
                for m in targets
                if start < m["encode_step"] <= end + 1 or m["encode_step"] == start == 0
            ]
            typed = [str(a.get("text", "")) for a in actions if a.get("type") == "type"]
            if kinds[0] in FINISHING:
                answer = next((str(a.get("text", "")) for a in actions if "text" in a), "")
                text = f"Answer “{answer}”" if answer else "Finish the task"
            elif _is_launcher(last.package) and not _is_launcher(first.package):
                text = "Go to the home screen"
            elif kinds[0] == "open_app" or last.package != first.package:
                text = f"Open {name(last.package)}"
            elif read:
                text = f"Find {', '.join(read)}"
            elif typed:
                text = f"Enter “{typed[0].strip()}”"
            else:
                text = f"{kinds[0].replace('_', ' ').capitalize()} in {name(first.package)}"
            counts = Counter(kinds)
            behaviour = ", ".join(
                f"{kind} ×{counts[kind]}" if counts[kind] > 1 else kind for kind in counts
            )
            changed = (first.package, first.activity, first.xml) != (
                last.package,
                last.activity,
                last.xml,
            )
            subgoals.append(
                {
                    "start": start,
                    "end": end,
                    "text": text,
                    "effect": _effect(first, last, names),
                    "behaviour": behaviour,
                    "success": "yes" if changed or kinds[-1] in FINISHING else "no",
                }
            )
        return subgoals

    def _anchors(
        self,
        episode: Episode,
        screens: list[_Screen],
        targets: list[dict[str, Any]],
        names: dict[str, str],
    ) -> list[dict[str, Any]]:
        anchors = []
        for i in range(len(episode.actions)):
            before, after = screens[i], screens[i + 1]
            if after.package != before.package and after.package:
                anchors.append(
                    {
                        "step": i,
                        "type": "state_change",
                        "content": _capitalised(
                            f"{_name_of(after.package, names)} is in the foreground"
                        ),
                        "description": f"Switched from {_name_of(before.package, names)}",
                    }
                )
        for m in targets:
            anchors.append(
                {
                    "step": m["encode_step"],
                    "type": "context_info",
                    "content": f"{m['key']}: {m['value']}",
                    "description": "Read here, needed at step "
                    + ", ".join(str(s) for s in m["retrieve_steps"]),
                    "evidence": {"bounds": m["evidence"]["bounds"], "text": m["value"]},
                }
            )
        if episode.actions:
            last = episode.actions[-1]
            anchors.append(
                {
                    "step": len(episode.actions) - 1,
                    "type": "finish",
                    "content": str(last.get("text") or last.get("status") or "Finished"),
                    "description": "The last step",
                }
            )
        return sorted(anchors, key=lambda a: a["step"])


def _name_of(package: str, names: dict[str, str]) -> str:
    if package in names:
        return names[package]
    return "the home screen" if _is_launcher(package) else app_label(package)


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _effect(first: _Screen, last: _Screen, names: dict[str, str]) -> str:
    name = _name_of(last.package, names)
    if last.package != first.package:
        return _capitalised(f"{name} is in the foreground.")
    if last.activity != first.activity:
        return _capitalised(f"{name} moved from {first.activity} to {last.activity}.")
    if last.xml != first.xml:
        return (
            "The home screen changed."
            if _is_launcher(last.package)
            else f"The {name} screen changed."
        )
    return "The screen is unchanged."
