"""The workspace page itself (header, status, tracks, stage, panels), written in Python.

Django's template engine spent more of the workspace's time than everything else it does
(a hundred variables, forty conditions, a dozen includes, on every load and every edit); these
functions write the same page from the same context (annotate/workspace.py), with every text
from the database escaped by ``_esc``. The templates keep their names and include these tags:
``annotate/_main.html`` is ``{% ws_main %}``, and so on. tests/annotate/test_workspace_panels.py
renders each both ways, against the templates as they were.
"""

from __future__ import annotations

from django import template
from django.templatetags.static import static
from django.utils.safestring import SafeString

from trajectories.routes import route_url
from trajectories.templatetags.trajectory_tags import action_overlay, action_summary

from .workspace_html import (
    HX_MAIN,
    _esc,
    _truncated,
    anchor_cards,
    anchor_jumps,
    anchor_options,
    filmstrip,
    graph_edges,
    graph_lanes,
    graph_nodes,
    history_items,
    link_items,
    memory_cards,
    options,
    problem_items,
    relation_legend,
    relation_markers,
    review_comments,
    step_comments,
    success_choices,
    track_cells,
)

register = template.Library()


def _safe(html: str) -> SafeString:
    return SafeString(html)  # every text in it is escaped where it is written


def _oob(context: template.Context) -> str:
    return ' hx-swap-oob="true"' if context.get("oob") else ""


def _hidden(context: template.Context) -> str:
    """The attribute that hides a part of the panels from those who may not edit."""
    return "" if context["can_edit"] else " hidden"


def _disabled(context: template.Context) -> str:
    return "" if context["can_edit"] else " disabled"


# ---------------------------------------------------------------- the header and tracks


@register.simple_tag(takes_context=True)
def ws_status(context: template.Context) -> SafeString:
    """The trajectory's status, version, undo / redo / submit and the next item of the queue."""
    trajectory, index, edit = context["trajectory"], context["index"], context["edit"]
    version = _esc(trajectory.version)
    parts = [
        f'<div id="ws-status" class="ws-status" data-version="{version}"{_oob(context)}>\n'
        f'  <span class="pill status-{_esc(trajectory.status)}">'
        f"{_esc(trajectory.get_status_display())}</span>\n"
        f'  <span class="muted small">version <b class="ws-version">{version}</b></span>\n'
    ]
    vals = f'hx-vals=\'{{"step": "{index}"}}\''
    if context["can_edit"]:
        problems = context["problems"]
        missing = (
            f' title="{len(problems)} thing{"" if len(problems) == 1 else "s"} missing"'
            if problems
            else ""
        )
        parts.append(
            '  <button type="button" class="ghost" id="ws-undo"'
            f"{'' if context['can_undo'] else ' disabled'}\n"
            f'          hx-post="{_esc(edit["undo"])}" {vals}\n'
            f'          {HX_MAIN} title="Undo (Ctrl+Z)">↶ Undo</button>\n'
            '  <button type="button" class="ghost" id="ws-redo"'
            f"{'' if context['can_redo'] else ' disabled'}\n"
            f'          hx-post="{_esc(edit["redo"])}" {vals}\n'
            f'          {HX_MAIN} title="Redo (Ctrl+Shift+Z)">↷ Redo</button>\n'
            f'  <button type="button" id="ws-submit"{missing}\n'
            f'          hx-post="{_esc(edit["submit"])}" {vals}\n'
            f"          {HX_MAIN}>Submit for review</button>\n"
        )
    if context.get("show_next"):
        following = context.get("next_item")
        if following:
            goal = following.task.goal
            parts.append(
                '  <a class="button" id="ws-next"'
                f' href="{_esc(route_url("annotate-workspace", following.pk))}"\n'
                f'     title="Next item of your queue (n): {_esc(goal)}">Next item: '
                f"{_esc(_truncated(goal, 32))} <kbd>n</kbd></a>\n"
            )
        else:
            parts.append(
                '  <a class="button ghost" id="ws-next"'
                f' href="{_esc(route_url("annotate-review"))}" title="Your queue (n)">'
                "Queue empty: my work <kbd>n</kbd></a>\n"
            )
    parts.append(
        '  <button type="button" class="ghost" id="ws-help-button"'
        ' title="Keyboard shortcuts (?)">?</button>\n</div>'
    )
    return _safe("".join(parts))


@register.simple_tag(takes_context=True)
def ws_track(context: template.Context) -> SafeString:
    """The subgoal track: a cell per step, coloured by its subgoal."""
    return _safe(
        f'<div id="ws-track" class="ws-track" style="--n: {context["step_count"]}"'
        f'{_oob(context)}\n     aria-label="Subgoals over the steps">\n  '
        f"{track_cells(context['track'], context['index'])}\n</div>"
    )


@register.simple_tag(takes_context=True)
def ws_proposal_track(context: template.Context) -> SafeString:
    """The open proposal's subgoals, dashed, above the track."""
    proposal, index = context.get("proposal"), context["index"]
    parts = [f'<div id="ws-proposed" class="ws-proposed"{_oob(context)}>\n']
    if proposal:
        proposer = _esc(proposal.proposer)
        parts.append(
            f'  <div class="ws-track proposed" style="--n: {context["step_count"]}"'
            f' aria-label="Proposed subgoals ({proposer})">\n'
        )
        for cell in context["proposal_track"]:
            item, first, i = cell["item"], cell["first"], cell["index"]
            css = ("" if item else " uncovered") + (" first" if first else "")
            css += " current" if i == index else ""
            title = f": {_esc(cell['text'])} [{_esc(cell['range'])}]" if item else ": no subgoal"
            parts.append(
                f'    <div class="cell{css}"\n'
                f'         data-step="{i}" title="Proposed{title}">\n'
                + (f'      <span class="num">{i}</span>\n' if first else "")
                + "    </div>\n"
            )
        model = f" · {_esc(proposal.model)}" if proposal.model else ""
        parts.append(
            "  </div>\n"
            f'  <p class="small muted proposed-legend">Proposed by <b>{proposer}</b>'
            f" ({_esc(proposal.prompt_version)}){model} · dashed, not yet labels ·"
            " <kbd>y</kbd> accept here · <kbd>x</kbd> reject here</p>\n"
        )
    parts.append("</div>")
    return _safe("".join(parts))


@register.simple_tag(takes_context=True)
def ws_problems(context: template.Context) -> SafeString:
    """What is missing before the trajectory can be submitted."""
    problems = context["problems"]
    count = (
        f'<span class="pill critical">{len(problems)}</span>'
        if problems
        else '<span class="pill success-yes">ready</span>'
    )
    return _safe(
        f'<section id="ws-problems" class="panel wide"{_oob(context)}>\n'
        f"  <h2>To do before submitting {count}</h2>\n"
        f'  <ul class="problems">\n  {problem_items(problems)}\n  </ul>\n</section>'
    )


@register.simple_tag(takes_context=True)
def ws_history(context: template.Context) -> SafeString:
    """The recent label changes, each with what it did."""
    return _safe(
        f'<section id="ws-history" class="panel wide"{_oob(context)}>\n'
        "  <h2>History</h2>\n"
        f'  <ol class="history small">\n  {history_items(context)}\n  </ol>\n</section>'
    )


# ---------------------------------------------------------------- the stage


def _stage(context: template.Context) -> str:
    """The selected step's screen before its action (with the action, the XML's boxes and
    the evidence drawn on it) and the screen after, or a line saying there are no steps."""
    step, index = context.get("step"), context["index"]
    if not step:
        return (
            f'  <section class="stage" aria-label="Step {index}">\n'
            '    <p class="muted">This trajectory has no steps.</p>\n  </section>\n'
        )
    screen = step.screen
    width, height = screen.width, screen.height
    summary = _esc(action_summary(step))
    evidence = "".join(
        f'<g class="evidence {_esc(b["kind"])}"><rect x="{_esc(b["x"])}" y="{_esc(b["y"])}"'
        f' width="{_esc(b["w"])}" height="{_esc(b["h"])}"/><text x="{_esc(b["x"])}"'
        f' y="{_esc(b["y"])}" dy="-4">{_esc(b["label"])}</text></g>'
        for b in context["evidence_boxes"]
    )
    after = context.get("after_screen")
    after_figure = ""
    if after:
        after_figure = (
            '      <figure class="screen screen-after" id="ws-after">\n'
            '        <div class="shot large ws-shot-after"'
            f' style="aspect-ratio: {after.width} / {after.height}">\n'
            f'          <div class="zoom"><img src="{_esc(context["after_url"])}"'
            f' alt="Screenshot after step {index}"\n'
            f'               width="{after.width}" height="{after.height}"'
            ' draggable="false"></div>\n'
            "        </div>\n"
            f'        <figcaption class="small muted">after step {index}</figcaption>\n'
            "      </figure>\n"
        )
    return (
        f'  <section class="stage" aria-label="Step {index}">\n'
        '    <div class="stage-head">\n'
        f'      <b>Step {index}</b> <span class="muted summary" title="{summary}">'
        f"· {summary}</span>\n"
        '      <span class="spacer"></span>\n'
        '      <label class="inline small"><input type="checkbox" id="ws-show-xml" checked>'
        " XML boxes</label>\n"
        '      <label class="inline small" title="The screen the action led to, beside the one'
        ' it acted on"><input type="checkbox" id="ws-show-after" checked> after</label>\n'
        '      <button type="button" class="ghost small" id="ws-zoom-fit" title="Zoom: wheel,'
        ' + / −, double-click; drag to pan; 0 fits">fit <span id="ws-zoom-level">100%</span>'
        "</button>\n"
        '      <button type="button" class="ghost small" id="ws-full-button" title="Full-screen'
        ' view (f); Esc leaves">full view <kbd>f</kbd></button>\n'
        "    </div>\n"
        f"    {step_comments(context['comments_here'])}\n"
        '    <div class="screens">\n'
        '      <figure class="screen">\n'
        '        <div class="shot large ws-shot" id="ws-shot"'
        f' style="aspect-ratio: {width} / {height}"\n'
        f'             data-width="{width}" data-height="{height}">\n'
        '          <div class="zoom">\n'
        f'          <img src="{_esc(context["screen_url"])}"'
        f' alt="Screenshot before step {index}"\n'
        f'               width="{width}" height="{height}" draggable="false">\n'
        f"          {action_overlay(step, 'overlay')}\n"
        f'          <svg class="xml" viewBox="0 0 {width} {height}" preserveAspectRatio="none"'
        ' id="ws-xml">\n'
        f"            {context['elements_svg']}\n"
        f"            {evidence}\n"
        '            <rect id="ws-draw" class="drawing" x="0" y="0" width="0" height="0"/>\n'
        "          </svg>\n"
        "          </div>\n"
        "        </div>\n"
        f'        <figcaption class="small muted">before step {index}</figcaption>\n'
        "      </figure>\n"
        f"{after_figure}"
        "    </div>\n"
        '    <p class="pick-hint small muted" id="ws-pick-hint" hidden>Picking evidence: click an'
        " element or drag a box · Esc cancels</p>\n"
        "  </section>\n"
    )


# ---------------------------------------------------------------- the panels


def _review(context: template.Context) -> str:
    """Review comments, and the reviewer's decision (approve, send back, reject)."""
    comments, index, edit = context["comments"], context["index"], context["edit"]
    can_review, can_reopen = context["can_review"], context["can_reopen"]
    if not (can_review or can_reopen or comments):
        return ""
    count = (
        f' <span class="muted small" id="ws-comment-count">{context["open_comments"]} open ·'
        f" {len(comments)} in all</span>"
        if comments
        else ""
    )
    form = ""
    if can_review or can_reopen:
        if can_review:
            buttons = (
                '          <button type="submit" name="decision" value="approve"'
                ' id="rv-approve">Approve</button>\n'
                '          <button type="submit" name="decision" value="send_back"'
                ' class="ghost" id="rv-send-back">Send back</button>\n'
                '          <button type="submit" name="decision" value="reject"'
                ' class="ghost danger" id="rv-reject">Reject</button>\n'
                '          <button type="button" class="ghost small"'
                f' hx-post="{_esc(edit["comment"])}" hx-include="#ws-review-form"'
                f" {HX_MAIN}>Comment only</button>\n"
            )
        else:
            buttons = (
                '          <button type="submit" name="decision" value="send_back"'
                ' class="ghost">Reopen (send back)</button>\n'
            )
        form = (
            f'      <form id="ws-review-form" hx-post="{_esc(edit["review"])}" {HX_MAIN}>\n'
            f'        <input type="hidden" name="step" value="{index}">\n'
            '        <textarea name="comment" id="rv-comment" rows="2"'
            f' placeholder="Comment on step {index} (needed to reject or send back)">'
            "</textarea>\n"
            f'        <div class="row">\n{buttons}        </div>\n'
            "      </form>\n"
        )
    return (
        '    <section class="panel wide" id="ws-review">\n'
        f"      <h2>Review{count}</h2>\n"
        f'      <ul class="small comments">\n      {review_comments(context)}\n      </ul>\n'
        f"{form}"
        "    </section>\n"
    )


def _proposals(context: template.Context) -> str:
    """The open proposal's items to accept, edit or reject; or how the last one went."""
    edit, can_edit = context["edit"], context["can_edit"]
    proposal = context.get("proposal")
    parts = [
        '    <section class="panel wide proposals" id="ws-proposals" aria-label="Proposals">\n'
    ]
    parts.append("      <h2>Proposals</h2>\n")
    if proposal:
        accept, reject = _esc(edit["proposal_accept"]), _esc(edit["proposal_reject"])
        pk = _esc(proposal.pk)
        items = context["proposal_items"]
        parts.append(
            f'      <fieldset{_disabled(context)} class="bare">\n'
            '        <div class="row">\n'
            f'          <button type="button" id="pr-accept-all" hx-post="{accept}"'
            f' hx-vals=\'{{"proposal": "{pk}", "items": "all"}}\' {HX_MAIN}>'
            "Accept all</button>\n"
            '          <button type="button" class="ghost danger" id="pr-reject-all"'
            f' hx-post="{reject}" hx-vals=\'{{"proposal": "{pk}", "items": "all"}}\''
            f" {HX_MAIN}>Reject all</button>\n"
            f'          <span class="small muted">{len(items)} proposed'
            f" item{'' if len(items) == 1 else 's'} to decide</span>\n"
            "        </div>\n"
            '        <ul class="proposal-items">\n'
        )
        for item in items:
            here = " here" if item["here"] else ""
            dom, kind, field = _esc(item["dom"]), _esc(item["kind"]), _esc(item["field"])
            parts.append(
                f'          <li class="proposal-item{here}" id="pr-{dom}">\n'
                f'            <span class="tag">{kind}</span> <span class="label">'
                f"{_esc(item['label'])}</span>\n"
                f'            <form class="row" hx-post="{accept}" {HX_MAIN}>\n'
                f'              <input type="hidden" name="proposal" value="{pk}">\n'
                f'              <input type="hidden" name="items" value="{_esc(item["id"])}">\n'
                f'              <input type="text" name="{field}" value="{_esc(item["value"])}"'
                f' aria-label="{kind} {field}" class="pr-edit" id="pr-edit-{dom}">\n'
                f'              <button type="submit" class="pr-accept{here}"'
                f' id="pr-accept-{dom}">Accept</button>\n'
                f'              <button type="button" class="ghost pr-reject{here}"'
                f' id="pr-reject-{dom}" hx-post="{reject}" hx-vals=\'{{"proposal": "{pk}",'
                f' "items": "{_esc(item["id"])}"}}\' {HX_MAIN}>Reject</button>\n'
                "            </form>\n"
                "          </li>\n"
            )
        parts.append("        </ul>\n      </fieldset>\n")
    elif context.get("proposal_waiting"):
        parts.append(
            f'      <p class="small muted">Proposals by'
            f" {_esc(context['proposal_waiting'].proposer)} were asked for; reload when the"
            " job has run.</p>\n"
        )
    else:
        failed, decided = context.get("proposal_failed"), context.get("proposal_decided")
        if failed:
            parts.append(
                f'      <p class="small error-text">The {_esc(failed.proposer)} proposal failed:'
                f" {_esc(failed.error)}</p>\n"
            )
        if decided:
            by = (decided.decided_by.get_username() if decided.decided_by else "") or "someone"
            parts.append(
                f'      <p class="small muted" id="pr-decided">The {_esc(decided.proposer)}'
                f" proposal ({_esc(decided.prompt_version)}) was"
                f" {_esc(str(decided.get_status_display()).lower())} by {_esc(by)}.</p>\n"
            )
        elif can_edit:
            parts.append(
                '      <button type="button" class="ghost" id="pr-ask"'
                f' hx-post="{_esc(edit["propose"])}" {HX_MAIN}>Propose labels (heuristic)'
                "</button>\n"
            )
        elif not failed:
            parts.append(
                '      <p class="small muted">No proposals for this trajectory; they can be'
                " asked for while it is being labelled.</p>\n"
            )
    parts.append("    </section>\n")
    return "".join(parts)


def _subgoal(context: template.Context) -> str:
    """The subgoal of the selected step: its fields, its boundaries, split, merge, delete."""
    g, index, edit = context["current_subgoal"], context["index"], context["edit"]
    hidden, last = _hidden(context), context["step_count"] - 1
    if g:
        gid = _esc(g["id"])
        start, end = _esc(g["start"]), _esc(g["end"])
        heading = (
            f'<span class="swatch" style="background: {_esc(g["colour"])}"></span>'
            f'<span class="range">{start}–{end}</span>'
        )
        fields = (
            f'        <form id="ws-subgoal-form" hx-post="{_esc(edit["subgoal"])}"'
            ' hx-swap="none"\n'
            '              hx-trigger="change, input delay:700ms, save-now"'
            ' hx-sync="#ws:queue all">\n'
            f'          <input type="hidden" name="step" value="{index}">'
            f'<input type="hidden" name="subgoal" value="{gid}">\n'
            '          <label for="sg-text">Intent (text)</label>\n'
            '          <textarea id="sg-text" name="text" rows="2" placeholder="What this part'
            f' of the task is for">{_esc(g["text"])}</textarea>\n'
            '          <label for="sg-effect">Effect</label>\n'
            '          <input type="text" id="sg-effect" name="effect"'
            f' value="{_esc(g["effect"])}" placeholder="What changed between its first and'
            ' last screen">\n'
            '          <label for="sg-behaviour">Behaviour</label>\n'
            '          <input type="text" id="sg-behaviour" name="behaviour"'
            f' value="{_esc(g["behaviour"])}" placeholder="How: the dominant interaction'
            ' pattern">\n'
            '          <div class="success-row" role="radiogroup" aria-label="Success">\n'
            '            <span class="label">Success</span>\n'
            f"            {success_choices(context['successes'], g['success'])}\n"
            "          </div>\n"
            "        </form>\n"
            f'        <form class="row"{hidden} hx-post="{_esc(edit["boundary"])}" {HX_MAIN}>\n'
            f'          <input type="hidden" name="step" value="{index}">'
            f'<input type="hidden" name="subgoal" value="{gid}">\n'
            f'          <label class="inline small">from <input type="number" name="start"'
            f' value="{start}" min="0" max="{last}"></label>\n'
            f'          <label class="inline small">to <input type="number" name="end"'
            f' value="{end}" min="0" max="{last}"></label>\n'
            '          <button type="submit" class="ghost small">Move</button>\n'
            "        </form>\n"
        )
        more = (
            f'        <button type="button" class="ghost" id="ws-merge"'
            f' hx-post="{_esc(edit["merge"])}"\n'
            f'                hx-vals=\'{{"step": "{index}", "subgoal": "{gid}"}}\''
            f" {HX_MAIN}\n"
            '                title="Merge with the next subgoal (m)">Merge with next <kbd>m</kbd>'
            "</button>\n"
            f'        <button type="button" class="ghost danger"'
            f' hx-post="{_esc(edit["delete_subgoal"])}"\n'
            f'                hx-vals=\'{{"step": "{index}", "subgoal": "{gid}"}}\''
            f" {HX_MAIN}>Delete</button>\n"
        )
    else:
        heading, more = "", ""
        fields = f'        <p class="muted small">Step {index} is not in a subgoal.</p>\n'
    return (
        '    <section class="panel" id="ws-subgoal">\n'
        f"      <h2>Subgoal {heading}</h2>\n"
        f'      <fieldset{_disabled(context)} class="bare">\n'
        f"{fields}"
        f'      <div class="row"{hidden}>\n'
        f'        <button type="button" class="ghost" id="ws-split" hx-post="{_esc(edit["split"])}"'
        f'\n                hx-vals=\'{{"step": "{index}", "at": "{index}"}}\' {HX_MAIN}\n'
        '                title="Start a subgoal at this step (s)">Split here <kbd>s</kbd>'
        "</button>\n"
        f"{more}"
        "      </div>\n"
        "      </fieldset>\n"
        "    </section>\n"
    )


def _step(context: template.Context) -> str:
    """The selected step's thought, summary, memory and trainable flag."""
    step, index, edit = context["step"], context["index"], context["edit"]
    return (
        '    <section class="panel" id="ws-step">\n'
        f"      <h2>Step {index}</h2>\n"
        f'      <fieldset{_disabled(context)} class="bare">\n'
        f'      <form id="ws-step-form" hx-post="{_esc(edit["step"])}" hx-swap="none"\n'
        '            hx-trigger="change, input delay:700ms, save-now" hx-sync="#ws:queue all">\n'
        f'        <input type="hidden" name="step" value="{index}">'
        '<input type="hidden" name="trainable_present" value="1">\n'
        '        <label for="st-thought">Thought</label>\n'
        '        <textarea id="st-thought" name="thought" rows="2">'
        f"{_esc(step.thought)}</textarea>\n"
        '        <label for="st-summary">Summary</label>\n'
        '        <input type="text" id="st-summary" name="summary"'
        f' value="{_esc(step.summary)}">\n'
        '        <label for="st-memory">Memory <span class="muted small">(STAMP: what to carry'
        " forward)</span></label>\n"
        f'        <textarea id="st-memory" name="memory" rows="2">{_esc(step.memory)}</textarea>\n'
        '        <label class="inline"><input type="checkbox" name="trainable"'
        f"{' checked' if step.trainable else ''}> trainable</label>\n"
        "      </form>\n"
        "      </fieldset>\n"
        "    </section>\n"
    )


def _memory(context: template.Context) -> str:
    """The memory targets, and the form for a new one on the selected step."""
    index, edit = context["index"], context["edit"]
    is_open = "" if context["memory_targets"] else " open"
    return (
        '    <section class="panel" id="ws-memory">\n'
        "      <h2>Memory targets</h2>\n"
        f'      <fieldset{_disabled(context)} class="bare">\n'
        f"      {memory_cards(context)}\n"
        f'      <details id="ws-memory-new"{is_open}{_hidden(context)}>\n'
        f"        <summary>New memory target at step {index} <kbd>r</kbd></summary>\n"
        f'        <form id="ws-memory-form" hx-post="{_esc(edit["memory_add"])}" {HX_MAIN}>\n'
        f'          <input type="hidden" name="step" value="{index}">\n'
        '          <div class="row">\n'
        '            <input type="text" name="key" id="mt-key" placeholder="key, e.g. price"'
        ' aria-label="Key" required>\n'
        '            <input type="text" name="value" id="mt-value" placeholder="value"'
        ' aria-label="Value">\n'
        "          </div>\n"
        '          <div class="row">\n'
        '            <input type="text" name="retrieve_steps" placeholder="needed at steps, e.g.'
        ' 7, 9" aria-label="Retrieve steps">\n'
        "          </div>\n"
        '          <input type="hidden" name="evidence" id="mt-evidence">\n'
        '          <div class="row">\n'
        '            <button type="button" class="ghost small" data-pick="#mt-evidence"'
        ' data-fill="#mt-value">Pick on screen <kbd>p</kbd></button>\n'
        '            <span class="evidence-shown small muted" data-for="#mt-evidence"></span>\n'
        '            <span class="spacer"></span>\n'
        '            <button type="submit" class="small">Add</button>\n'
        "          </div>\n"
        "        </form>\n"
        "      </details>\n"
        "      </fieldset>\n"
        "    </section>\n"
    )


def _anchors(context: template.Context) -> str:
    """The anchors on the selected step, a form for a new one, the anchor graph and links."""
    index, edit, anchors = context["index"], context["edit"], context["anchors"]
    graph, relations = context["graph"], context["relations"]
    is_open = "" if context["anchors_here"] else " open"
    link_form = ""
    if len(anchors) > 1 and context["can_edit"]:
        link_form = (
            f'      <form id="ws-link-form" class="row" hx-post="{_esc(edit["link_add"])}"'
            f" {HX_MAIN}>\n"
            f'        <input type="hidden" name="step" value="{index}">\n'
            '        <select name="source" id="ln-source" aria-label="From">'
            f"{anchor_options(anchors)}</select>\n"
            '        <select name="relation" id="ln-relation" aria-label="Relation">'
            f"{options(relations, lower=True)}</select>\n"
            '        <select name="target" id="ln-target" aria-label="To">'
            f"{anchor_options(anchors, selected=2)}</select>\n"
            '        <label class="inline small"><input type="checkbox" name="critical"'
            ' id="ln-critical"> critical</label>\n'
            '        <button type="submit" class="small">Link</button>\n'
            "      </form>\n"
        )
    jumps = f'      <p class="small">All: {anchor_jumps(anchors)}</p>\n' if anchors else ""
    return (
        '    <section class="panel wide" id="ws-anchors">\n'
        "      <h2>Anchors</h2>\n"
        f'      <fieldset{_disabled(context)} class="bare">\n'
        f"      {anchor_cards(context)}\n"
        f'      <details id="ws-anchor-new"{is_open}{_hidden(context)}>\n'
        f"        <summary>New anchor at step {index} <kbd>a</kbd></summary>\n"
        f'        <form id="ws-anchor-form" hx-post="{_esc(edit["anchor_add"])}" {HX_MAIN}>\n'
        f'          <input type="hidden" name="step" value="{index}">\n'
        '          <select name="type" id="an-type" aria-label="Anchor type">'
        f"{options(context['anchor_types'])}</select>\n"
        '          <input type="text" name="content" id="an-content" placeholder="content: the'
        ' state that matters" aria-label="Content" required>\n'
        '          <input type="text" name="description" placeholder="description: why it'
        ' matters downstream" aria-label="Description">\n'
        '          <input type="hidden" name="evidence" id="an-evidence">\n'
        '          <div class="row">\n'
        '            <button type="button" class="ghost small" data-pick="#an-evidence">Pick'
        " evidence</button>\n"
        '            <span class="evidence-shown small muted" data-for="#an-evidence"></span>\n'
        '            <span class="spacer"></span>\n'
        '            <button type="submit" class="small">Add anchor</button>\n'
        "          </div>\n"
        "        </form>\n"
        "      </details>\n"
        "\n"
        "      <h3>Anchor graph</h3>\n"
        f'      <svg class="graph" id="ws-graph" viewBox="0 0 {graph["width"]}'
        f' {graph["height"]}" role="img" aria-label="Anchor graph">\n'
        f"        <defs>{relation_markers(relations)}</defs>\n"
        f"        {graph_lanes(graph)}\n"
        f"        {graph_edges(graph)}\n"
        f"        {graph_nodes(graph, index)}\n"
        "      </svg>\n"
        f'      <p class="legend small" id="ws-legend">{relation_legend(relations)}'
        '<span class="rel-key"><svg width="22" height="8" aria-hidden="true"><line x1="0"'
        ' y1="4" x2="22" y2="4" class="edge critical"/></svg> thick: critical</span></p>\n'
        '      <p class="muted small" id="ws-link-hint">Click two anchors, then press a'
        " relation's number (<kbd>c</kbd> first marks it critical; Esc cancels); double-click"
        " an anchor to go to its step.</p>\n"
        f'      <ul class="links small">\n      {link_items(context)}\n      </ul>\n'
        f"{link_form}"
        f"{jumps}"
        "      </fieldset>\n"
        "    </section>\n"
    )


@register.simple_tag(takes_context=True)
def ws_main(context: template.Context) -> SafeString:
    """The stage and every panel: what an edit of the labels draws again."""
    panels = ""
    if context.get("step"):
        panels = (
            _review(context)
            + _proposals(context)
            + _subgoal(context)
            + _step(context)
            + _memory(context)
            + _anchors(context)
        )
    with context.push(oob=False):
        problems, history = ws_problems(context), ws_history(context)
    return _safe(
        f'<div id="ws-main" class="ws-main" data-step="{context["index"]}"{_oob(context)}>\n'
        f"{_stage(context)}\n"
        '  <div class="panels">\n'
        f"{panels}"
        f"    {problems}\n"
        f"    {history}\n"
        "  </div>\n"
        "</div>"
    )


# ---------------------------------------------------------------- the page


HELP = """  <div id="ws-help" class="ws-help" hidden>
    <div class="card">
      <h2>Keyboard</h2>
      <dl class="keys">
        <dt>j / →</dt><dd>next step</dd>
        <dt>k / ←</dt><dd>previous step</dd>
        <dt>g</dt><dd>go to step N (type the number, Enter)</dd>
        <dt>n</dt><dd>next item of your queue, once you have submitted or reviewed</dd>
        <dt>s</dt><dd>split: start a subgoal at this step</dd>
        <dt>m</dt><dd>merge this subgoal with the next</dd>
        <dt>1 / 2 / 3</dt><dd>subgoal success: yes / no / uncertain</dd>
        <dt>t</dt><dd>edit the subgoal's text</dd>
        <dt>a</dt><dd>new anchor on this step</dd>
        <dt>r</dt><dd>new memory target on this step</dd>
        <dt>p</dt><dd>pick evidence on the screenshot (click an element or drag a box)</dd>
        <dt>click, click, 1–4</dt><dd>link two anchors of the graph: prerequisite, enables, \
result of, blocks (c first: critical)</dd>
        <dt>+ / − / 0</dt><dd>zoom the screens in / out / fit (also: wheel, double-click; \
drag to pan)</dd>
        <dt>Shift+arrows</dt><dd>pan the zoomed screens</dd>
        <dt>f</dt><dd>full-screen view of the screens (Esc leaves)</dd>
        <dt>Ctrl+S</dt><dd>save now (every edit also saves by itself)</dd>
        <dt>Ctrl+Z / Ctrl+Shift+Z</dt><dd>undo / redo</dd>
        <dt>Esc</dt><dd>leave a field, cancel picking, close this help</dd>
        <dt>y / x</dt><dd>accept / reject the proposed item on this step</dd>
        <dt>?</dt><dd>this help</dd>
      </dl>
      <p class="muted small">Drag the edge of a coloured subgoal on the track to move it; an \
edge shared with the next subgoal moves for both, leaving no gap.</p>
    </div>
  </div>
"""


@register.simple_tag(takes_context=True)
def ws_page(context: template.Context) -> SafeString:
    """The whole workspace: header, tracks, stage and panels, filmstrip and keyboard help."""
    trajectory, index, step_count = context["trajectory"], context["index"], context["step_count"]
    here = _esc(route_url("annotate-workspace", trajectory.pk))
    with context.push(oob=False):
        status, proposed, track = (
            ws_status(context),
            ws_proposal_track(context),
            ws_track(context),
        )
        main = ws_main(context)
    return _safe(
        f'<link rel="stylesheet" href="{_esc(static("annotate/workspace.css"))}">\n'
        f'<div id="ws" class="ws" data-steps="{step_count}"\n'
        f'     data-url="{here}"\n'
        f'     data-edit="{_esc(context["edit"]["OP"])}">\n'
        '  <header class="ws-head">\n'
        '    <div class="ws-title">\n'
        f'      <a href="{_esc(route_url("trajectory-detail", trajectory.pk))}"'
        ' class="muted small">← trajectory</a>\n'
        f"      <h1>{_esc(context['task'].goal)}</h1>\n"
        "    </div>\n"
        '    <div class="ws-head-right">\n'
        '      <span class="ws-saved small muted" id="ws-saved" aria-live="polite">saved</span>\n'
        f"      {status}\n"
        "    </div>\n"
        "  </header>\n"
        '  <div id="ws-flash" class="ws-flash" role="alert" aria-live="polite"></div>\n'
        f"  {proposed}\n"
        f"  {track}\n"
        '  <form id="ws-goto" class="ws-goto" hidden>\n'
        '    <label class="inline">Go to step <input type="text" inputmode="numeric"'
        ' id="ws-goto-step" autocomplete="off"\n'
        '      aria-describedby="ws-goto-hint" size="4"></label>\n'
        f'    <span class="small muted" id="ws-goto-hint">0–{step_count - 1} · Enter goes ·'
        " Esc cancels</span>\n"
        "  </form>\n"
        f"  {main}\n"
        '  <ol class="filmstrip ws-film" aria-label="Steps">\n'
        f"  {filmstrip(context['steps'], index)}\n"
        "  </ol>\n"
        f'  <a id="ws-nav" hidden hx-get="{here}" hx-target="#ws-main"\n'
        '     hx-swap="outerHTML" hx-sync="#ws:queue all" hx-trigger="navigate"></a>\n'
        f"{HELP}"
        "</div>\n"
        f'<script src="{_esc(static("annotate/workspace.js"))}" defer></script>\n'
    )
