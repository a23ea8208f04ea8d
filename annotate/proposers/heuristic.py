"""The proposer that needs no model: segments, memory targets and anchors from the screens.

Subgoals start where the foreground app changes (opening an app from the launcher is a subgoal
of its own; going home ends one), at the click that focuses a field about to be typed into,
after a text entry is submitted (Enter), after a back that leaves a screen where a remembered
value was read (the look-up is done), at a sharp change of activity and screen structure in a
long run, and at the answer. A subgoal succeeded when its end screen differs from its start.

Memory targets: a value typed or answered at a later step that was visible as text (not in an
input field) on an earlier screen, and was not typed before it appeared there. It is encoded on
the first screen that shows it and retrieved by every step that types or answers it.
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


def _key_for(el: UIElement, value: str, label: str) -> str:
    """A key from the label beside the value, the text before it, or its resource-id."""
    before = el.text.split(value, 1)[0] if value in el.text else ""
    for name in (label, before, el.resource_id.partition(":id/")[2]):
        key = re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_")
        if key:
            return key
    return "value"


class HeuristicProposer:
    name = "heuristic"
    prompt_version = "h1"
    model = ""

    def propose(self, episode: Episode) -> Proposed:
        screens = self._screens(episode)
        targets = self._memory_targets(episode, screens)
        starts = self._starts(episode, screens, {m["encode_step"] for m in targets})
        subgoals = self._subgoals(episode, screens, starts, targets)
        anchors = self._anchors(episode, screens, targets)
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
            out.append(_Screen(view.package, view.activity, view.xml, tree, tokens, labels))
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

    def _memory_targets(self, episode: Episode, screens: list[_Screen]) -> list[dict[str, Any]]:
        typed_at: dict[str, list[int]] = {}
        for i, action in enumerate(episode.actions):
            if action.get("type") in ("type", "answer"):
                for token in tokens_of(str(action.get("text", ""))):
                    if memorable(token):
                        typed_at.setdefault(normal(token), []).append(i)
        found: dict[tuple[str, int], dict[str, Any]] = {}
        for token, steps in typed_at.items():
            first_typed = steps[0]
            for step in steps:
                shown_on = [e for e in range(step) if token in screens[e].tokens]
                # where it stands out: shown on its own, among the fewest other values
                encode = min(
                    shown_on,
                    key=lambda e: (
                        not _alone(screens[e].tokens[token], token),
                        len(screens[e].tokens),
                        e,
                    ),
                    default=None,
                )
                if encode is None or first_typed < encode:
                    continue  # never shown before, or shown because it was typed
                el = screens[encode].tokens[token]
                shown = next(t for t in tokens_of(el.text or el.content_desc) if normal(t) == token)
                target = found.setdefault(
                    (token, encode),
                    {
                        "key": _key_for(el, shown, screens[encode].labels.get(el.path, "")),
                        "value": shown,
                        "encode_step": encode,
                        "retrieve_steps": [],
                        "evidence": {
                            "bounds": list(el.bounds),
                            "text": el.text or el.content_desc,
                            "resource_id": el.resource_id,
                            "path": el.path,
                        },
                    },
                )
                target["retrieve_steps"].append(step)
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
            elif kind == "open_app" or (before.package and after.package != before.package):
                if _is_launcher(after.package):
                    starts.add(i + 1)  # going home ends the subgoal
                else:
                    starts.add(i)
                    if i == 0 or _is_launcher(before.package):
                        starts.add(i + 1)  # opening an app is a subgoal of its own
            elif kind == "type" and str(action.get("text", "")).endswith("\n"):
                starts.add(i + 1)
            elif kind in ("enter", "key") and i > 0 and actions[i - 1].get("type") == "type":
                if kind == "enter" or str(action.get("keycode", "")) in ENTER_KEYS:
                    starts.add(i + 1)
            elif kind == "back" and i in encodes:
                starts.add(i + 1)  # the value was read: the look-up is over
            elif (
                i - run_start >= LONG_RUN
                and before.activity != after.activity
                and before.tree is not None
                and after.tree is not None
                and structure_similarity(before.tree, after.tree) < SHARP_CHANGE
            ):
                starts.add(i + 1)
            if kind == "type" and i > 0 and self._focused_field(actions[i - 1], screens[i - 1]):
                starts.add(i - 1)
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
    ) -> list[dict[str, Any]]:
        n = len(episode.actions)
        subgoals = []
        for k, start in enumerate(starts):
            end = (starts[k + 1] - 1) if k + 1 < len(starts) else n - 1
            actions = episode.actions[start : end + 1]
            kinds = [a.get("type", "") for a in actions]
            first, last = screens[start], screens[end + 1]
            read = [m["value"] for m in targets if start <= m["encode_step"] <= end]
            typed = [str(a.get("text", "")) for a in actions if a.get("type") == "type"]
            if kinds[0] in FINISHING:
                answer = next((str(a.get("text", "")) for a in actions if "text" in a), "")
                text = f"Answer “{answer}”" if answer else "Finish the task"
            elif kinds[0] == "open_app" or last.package != first.package:
                text = f"Open {app_label(last.package)}"
            elif read:
                text = f"Find {', '.join(read)}"
            elif typed:
                text = f"Enter “{typed[0].strip()}”"
            else:
                text = f"{kinds[0].replace('_', ' ').capitalize()} in {app_label(first.package)}"
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
                    "effect": _effect(first, last),
                    "behaviour": behaviour,
                    "success": "yes" if changed or kinds[-1] in FINISHING else "no",
                }
            )
        return subgoals

    def _anchors(
        self, episode: Episode, screens: list[_Screen], targets: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        anchors = []
        for i in range(len(episode.actions)):
            before, after = screens[i], screens[i + 1]
            if after.package != before.package and after.package:
                anchors.append(
                    {
                        "step": i,
                        "type": "state_change",
                        "content": f"{app_label(after.package)} is in the foreground",
                        "description": f"Switched from {app_label(before.package)}",
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


def _effect(first: _Screen, last: _Screen) -> str:
    if last.package != first.package:
        return f"{app_label(last.package)} is in the foreground."
    if last.activity != first.activity:
        return f"{app_label(last.package)} moved from {first.activity} to {last.activity}."
    if last.xml != first.xml:
        return f"The {app_label(last.package)} screen changed."
    return "The screen is unchanged."
