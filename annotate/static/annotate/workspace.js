// The annotation workspace: step navigation, keyboard, evidence picking, boundary dragging,
// link drawing, and the version every save carries. Plain JS on top of htmx; no build step.
(function () {
  "use strict";
  const ws = document.getElementById("ws");
  if (!ws) return;
  const stepCount = Number(ws.dataset.steps);
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  const current = () => Number($("#ws-main").dataset.step || 0);
  const version = () => $("#ws-status").dataset.version;
  const typing = (el) =>
    el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName)) &&
    !(el.type === "checkbox" || el.type === "radio");
  // A form's buttons keep the keys typed at them, as its fields do: Tab from a field lands on
  // one, and what the person goes on typing is meant for the form, never a shortcut.
  const formButton = (el) =>
    Boolean(el && el.form && el.matches("button, input[type=submit], input[type=button], input[type=reset]"));
  const keysGoToControl = (el) => typing(el) || formButton(el);

  // ------------------------------------------------------------------ saving
  document.body.addEventListener("htmx:configRequest", (evt) => {
    if (evt.detail.verb === "post") {
      evt.detail.parameters["version"] = version();
      if (!evt.detail.parameters["step"]) evt.detail.parameters["step"] = String(current());
    }
    if (evt.detail.elt.id === "ws-nav") {
      evt.detail.path = ws.dataset.url + "?step=" + evt.detail.elt.dataset.step;
    }
  });
  const saved = (text, cls) => {
    const el = $("#ws-saved");
    if (el) { el.textContent = text; el.className = "ws-saved small " + (cls || "muted"); }
  };
  document.body.addEventListener("htmx:beforeRequest", (evt) => {
    if (evt.detail.requestConfig && evt.detail.requestConfig.verb === "post") saved("saving…");
  });
  document.body.addEventListener("htmx:beforeSwap", (evt) => {
    const code = evt.detail.xhr.status;
    if ([400, 403, 404, 409].includes(code)) {
      // Refusals are shown, never swallowed: the message goes to the flash area; a 409
      // also brings the newer version in (out of band).
      evt.detail.shouldSwap = true;
      evt.detail.isError = false;
      evt.detail.target = $("#ws-flash");
      evt.detail.swapOverride = "innerHTML";
      if (code === 403 || code === 404) {
        evt.detail.serverResponse = '<div class="error"><p></p></div>';
      }
    } else if (code === 200 && evt.detail.elt.id !== "ws-proposals") {
      // (the proposals panel polling while a proposal is made leaves messages alone)
      $("#ws-flash").innerHTML = "";
    }
  });
  document.body.addEventListener("htmx:afterSwap", (evt) => {
    const code = evt.detail.xhr.status;
    if (code === 403 || code === 404) {
      $("#ws-flash p").textContent = evt.detail.xhr.responseText.slice(0, 300);
    }
  });
  document.body.addEventListener("htmx:afterRequest", (evt) => {
    const code = evt.detail.xhr ? evt.detail.xhr.status : 0;
    if (evt.detail.requestConfig && evt.detail.requestConfig.verb !== "post") return;
    if (code === 200) saved("saved", "ok");
    else if (code === 409) saved("not saved: newer version", "bad");
    else saved("not saved", "bad");
  });
  document.body.addEventListener("htmx:afterSettle", () => {
    afterRender();
  });
  // The zoom, full view and hidden after screen carry over to a swapped-in stage at once,
  // not a settle delay later (no flash of the fitted, unhidden screens).
  document.body.addEventListener("htmx:afterSwap", () => applyView());
  document.body.addEventListener("htmx:oobAfterSwap", () => applyView());

  function flush() {
    // Leaving a field fires its change event: the save is queued before anything else.
    const el = document.activeElement;
    if (el && typing(el)) el.blur();
    $$("form[hx-trigger*='save-now']").forEach((f) => f.contains(el) && htmx.trigger(f, "save-now"));
  }

  // ------------------------------------------------------------------ navigation
  function select(index) {
    if (!(index >= 0 && index < stepCount) || index === current()) return;
    flush();
    const nav = $("#ws-nav");
    nav.dataset.step = String(index);
    htmx.trigger(nav, "navigate");
    markSelected(index);
  }
  function markSelected(index) {
    $$(".ws-film .frame.selected").forEach((f) => f.classList.remove("selected"));
    const frame = document.getElementById("frame-" + index);
    if (frame) {
      frame.classList.add("selected");
      // Scroll the filmstrip only, never the page (it sits under the panels).
      const film = frame.parentElement;
      film.scrollLeft = frame.offsetLeft - film.offsetLeft - (film.clientWidth - frame.offsetWidth) / 2;
    }
    $$("#ws-track .cell.current, #ws-proposed .cell.current").forEach((c) => c.classList.remove("current"));
    $$(`#ws-track .cell[data-step="${index}"], #ws-proposed .cell[data-step="${index}"]`).forEach(
      (c) => c.classList.add("current"));
    const url = new URL(window.location);
    url.searchParams.set("step", index);
    history.replaceState(null, "", url);
  }
  function afterRender() {
    if (linkFrom && !$("#ws-graph .node.from")) cancelLink(); // the graph was redrawn
    markSelected(current());
    keepProposalMark();
    showEvidence();
    applyView();
    $("#ws-show-xml") && ($("#ws-show-xml").onchange = (e) =>
      $("#ws-xml").classList.toggle("hidden-els", !e.target.checked));
  }

  ws.addEventListener("click", (evt) => {
    const frame = evt.target.closest(".ws-film .frame a");
    const jump = evt.target.closest("[data-jump]");
    const cell = evt.target.closest("#ws-track .cell, #ws-proposed .cell");
    if (frame) {
      evt.preventDefault();
      select(Number(frame.parentElement.dataset.step));
    } else if (jump) {
      evt.preventDefault();
      select(Number(jump.dataset.jump));
    } else if (cell && !evt.target.classList.contains("handle") && !dragged) {
      select(Number(cell.dataset.step));
    }
  });

  // ------------------------------------------------------------------ keyboard
  // Every key press acts, in order, however fast: while a request is in flight (or key presses
  // are already waiting) a key press waits its turn, and runs against the page the previous
  // one produced. Consecutive step moves are added up into one navigation.
  let inFlight = 0;
  const pending = [];
  document.body.addEventListener("htmx:beforeRequest", (evt) => {
    inFlight += 1;
    // The request's own end (load, error, abort or timeout), also when the element that sent
    // it has been swapped out meanwhile. A swapped-in button works once htmx has settled it
    // (a timer of the settle delay, set before this one): only then may a waiting key act.
    evt.detail.xhr.addEventListener("loadend", () => setTimeout(() => {
      inFlight = Math.max(0, inFlight - 1);
      pump();
    }, htmx.config.defaultSettleDelay));
  });
  function pump() {
    while (pending.length && inFlight === 0) {
      const k = pending.shift();
      const step = stepMove(k);
      if (step) {
        let by = step;
        while (pending.length && stepMove(pending[0])) by += stepMove(pending.shift());
        select(Math.min(Math.max(current() + by, 0), stepCount - 1));
      } else {
        handleKey(k, true);
      }
    }
  }
  const COMMAND_KEYS = new Set(["j", "k", "ArrowRight", "ArrowLeft", "s", "m", "1", "2", "3",
    "4", "c", "t", "a", "r", "p", "g", "n", "y", "x", "o", "+", "=", "-", "0", "f"]);
  function stepMove(k) {
    if (k.ctrlKey || k.metaKey || k.altKey || k.shiftKey || keysGoToControl(document.activeElement)) return 0;
    return { j: 1, ArrowRight: 1, k: -1, ArrowLeft: -1 }[k.key] || 0;
  }
  function typeInto(el, k) {
    // A key press that waited while a field was being focused lands in that field.
    if (k.key === "Enter" && el.tagName === "INPUT") {
      if (el.form) el.form.requestSubmit();
    } else if (k.key === "Backspace" && "selectionStart" in el) {
      const at = el.selectionStart;
      if (at > 0) el.setRangeText("", at - 1, at, "end");
      el.dispatchEvent(new Event("input", { bubbles: true }));
    } else if (k.key.length === 1 && "setRangeText" in el) {
      el.setRangeText(k.key, el.selectionStart, el.selectionEnd, "end");
      el.dispatchEvent(new Event("input", { bubbles: true }));
    }
  }
  document.addEventListener("keydown", (evt) => {
    const k = { key: evt.key, ctrlKey: evt.ctrlKey, metaKey: evt.metaKey, altKey: evt.altKey,
      shiftKey: evt.shiftKey };
    const waits = pending.length > 0 ||
      (inFlight > 0 && !keysGoToControl(evt.target) && (COMMAND_KEYS.has(evt.key) ||
        ((evt.ctrlKey || evt.metaKey) && evt.key.toLowerCase() === "z")));
    if (waits && !["Shift", "Control", "Alt", "Meta"].includes(evt.key)) {
      evt.preventDefault();
      pending.push(k);
      return;
    }
    if (handleKey(k, false)) evt.preventDefault();
  });
  // Acts on one key press; true when the browser's own handling must not happen.
  function handleKey(k, replayed) {
    const key = k.key;
    const mod = k.ctrlKey || k.metaKey;
    const active = document.activeElement;
    if (mod && key.toLowerCase() === "s") {
      flush();
      return true;
    }
    if (key === "Escape") {
      if (picking) { cancelPick(); return false; }
      if (linkFrom) { cancelLink(); return false; }
      if (!$("#ws-help").hidden) { $("#ws-help").hidden = true; return false; }
      if (view.full) { setFull(false); return false; }
      if (!$("#ws-goto").hidden) { closeGoto(); return false; }
      if (keysGoToControl(active)) active.blur();
      return false;
    }
    if (keysGoToControl(active)) {
      // Text fields keep their keys (and their own undo); a form's buttons theirs.
      if (replayed && !mod && typing(active)) typeInto(active, k);
      return false;
    }
    if (mod && key.toLowerCase() === "z") {
      const button = k.shiftKey ? $("#ws-redo") : $("#ws-undo");
      if (button && !button.disabled) button.click();
      return true;
    }
    if (mod || k.altKey) return false;
    if (k.shiftKey && key.startsWith("Arrow")) {
      const box = shotBox();
      if (!box) return false;
      const by = { ArrowLeft: [1, 0], ArrowRight: [-1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] }[key];
      panBy(by[0] * box.width * 0.15, by[1] * box.height * 0.15);
      return true;
    }
    if (linkTo && ["1", "2", "3", "4"].includes(key)) {
      makeLink(RELATIONS[Number(key) - 1]);
      return true;
    }
    if (linkTo && key === "c" && $("#ln-critical")) {
      $("#ln-critical").checked = !$("#ln-critical").checked;
      return true;
    }
    const click = (sel) => { const el = $(sel); if (el && !el.disabled) el.click(); };
    switch (key) {
      case "j": case "ArrowRight": select(current() + 1); return true;
      case "k": case "ArrowLeft": select(current() - 1); return true;
      case "s": click("#ws-split"); return false;
      case "m": click("#ws-merge"); return false;
      case "1": case "2": case "3": {
        const radios = $$("#ws-subgoal-form input[name=success]");
        const radio = radios[Number(key) - 1];
        if (radio && !radio.disabled) {
          radio.checked = true;
          radio.dispatchEvent(new Event("change", { bubbles: true }));
        }
        return false;
      }
      case "t": $("#sg-text") && $("#sg-text").focus(); return true;
      case "a":
        $("#ws-anchor-new").open = true;
        $("#an-content").focus();
        return true;
      case "r":
        $("#ws-memory-new").open = true;
        $("#mt-key").focus();
        return true;
      case "p": {
        const target = $("#ws-anchor-new").contains(active) ? "#an-evidence" : "#mt-evidence";
        startPick($(`[data-pick="${target}"]`));
        return false;
      }
      case "?": $("#ws-help").hidden = !$("#ws-help").hidden; return false;
      case "+": case "=": zoomAt(1.5); return true;
      case "-": zoomAt(1 / 1.5); return true;
      case "0": fit(); return true;
      case "f": setFull(!view.full); return true;
      case "g":
        $("#ws-goto").hidden = false;
        $("#ws-goto-step").value = "";
        $("#ws-goto-step").focus();
        return true;
      case "n": click("#ws-next"); return true;
      case "y": click("#ws-proposals .proposal-item.marked .pr-accept"); return true;
      case "x": click("#ws-proposals .proposal-item.marked .pr-reject"); return true;
      case "o": markNextProposal(); return true;
    }
    return false;
  }
  ws.addEventListener("click", (evt) => {
    if (evt.target.closest("#ws-help-button")) $("#ws-help").hidden = !$("#ws-help").hidden;
    else if (evt.target.closest("#ws-help")) $("#ws-help").hidden = true;
  });

  // ------------------------------------------------------------------ the marked proposal
  // y and x act on one proposal of this step, the marked one (outlined, ▸): the first listed
  // (the page marks it), or the one marked with o (the next of this step) or a click. The
  // choice holds while the page stays on this step and the proposal is still there.
  let proposalMark = null; // {step, item}
  const proposalsHere = () => $$("#ws-proposals .proposal-item.here");
  function markProposal(li) {
    $$("#ws-proposals .proposal-item.marked").forEach((el) => el.classList.remove("marked"));
    li.classList.add("marked");
    proposalMark = { step: current(), item: li.dataset.item };
  }
  function keepProposalMark() {
    const chosen = proposalMark && proposalMark.step === current() &&
      proposalsHere().find((li) => li.dataset.item === proposalMark.item);
    if (chosen) markProposal(chosen);
    else proposalMark = null;
  }
  function markNextProposal() {
    const here = proposalsHere();
    if (!here.length) return;
    const at = here.findIndex((li) => li.classList.contains("marked"));
    markProposal(here[(at + 1) % here.length]);
  }
  ["click", "focusin"].forEach((type) => ws.addEventListener(type, (evt) => {
    const li = evt.target.closest && evt.target.closest("#ws-proposals .proposal-item.here");
    if (li && !li.classList.contains("marked")) markProposal(li);
  }));

  // ------------------------------------------------------------------ go to step N
  function closeGoto() {
    const form = $("#ws-goto");
    form.hidden = true;
    form.classList.remove("bad");
    $("#ws-goto-hint").textContent = `0–${stepCount - 1} · Enter goes · Esc cancels`;
    if (document.activeElement === $("#ws-goto-step")) document.activeElement.blur();
  }
  ws.addEventListener("submit", (evt) => {
    if (evt.target.id !== "ws-goto") return;
    evt.preventDefault();
    const raw = $("#ws-goto-step").value.trim();
    const index = Number(raw);
    if (raw === "" || !Number.isInteger(index) || index < 0 || index >= stepCount) {
      evt.target.classList.add("bad");
      $("#ws-goto-hint").textContent = `no step “${raw}”: this trajectory has steps 0–${stepCount - 1}`;
      return;
    }
    closeGoto();
    select(index);
  });

  // ------------------------------------------------------------------ zoom, pan, full view
  // One view for the before and after screens (so they stay comparable), kept across steps.
  const view = { z: 1, x: 0, y: 0, full: false, after: localStorage.getItem("ws-after") !== "off" };
  const shotBox = () => { const el = $("#ws-shot"); return el ? el.getBoundingClientRect() : null; };
  // The screens take the window's height below where they start (under the track, the
  // stage's head and any review comment on the step), so all of them is above the fold.
  function fitHeight() {
    const stage = $("#ws-main .stage");
    const screens = $("#ws-main .screens");
    if (!stage || !screens || view.full) return;
    stage.style.removeProperty("--shot-h");
    // The screens' height sets their width, and so how many lines a review comment above
    // them wraps to, which moves where they start: measured again until it holds.
    for (let tries = 0; tries < 4; tries++) {
      // Where the screens start on the page, not where the sticky stage has moved them to.
      const top = $("#ws-main").getBoundingClientRect().top + window.scrollY +
        screens.getBoundingClientRect().top - stage.getBoundingClientRect().top;
      const height = Math.max(320, window.innerHeight - top - 30) + "px";
      if (stage.style.getPropertyValue("--shot-h") === height) break;
      stage.style.setProperty("--shot-h", height);
    }
  }
  window.addEventListener("resize", () => { fitHeight(); applyView(); });
  function applyView() {
    fitHeight();
    const box = shotBox();
    if (box) {
      view.x = Math.min(0, Math.max(box.width * (1 - view.z), view.x));
      view.y = Math.min(0, Math.max(box.height * (1 - view.z), view.y));
    }
    $$(".stage .shot .zoom").forEach((el) => {
      el.style.transform = view.z === 1 ? "" : `translate(${view.x}px, ${view.y}px) scale(${view.z})`;
    });
    const stage = $("#ws-main .stage");
    if (stage) {
      stage.classList.toggle("zoomed", view.z > 1);
      stage.classList.toggle("full", view.full);
      stage.classList.toggle("no-after", !view.after);
    }
    const level = $("#ws-zoom-level");
    if (level) level.textContent = Math.round(view.z * 100) + "%";
    const after = $("#ws-show-after");
    if (after) after.checked = view.after;
  }
  // Zoom by ``factor`` keeping the point (x, y) of the screen box (default: its centre) still.
  function zoomAt(factor, x, y) {
    const box = shotBox();
    if (!box) return;
    if (x === undefined) { x = box.width / 2; y = box.height / 2; }
    const z = Math.min(Math.max(view.z * factor, 1), 8);
    view.x = x - ((x - view.x) * z) / view.z;
    view.y = y - ((y - view.y) * z) / view.z;
    view.z = z;
    applyView();
  }
  function panBy(dx, dy) { view.x += dx; view.y += dy; applyView(); }
  function fit() { view.z = 1; view.x = 0; view.y = 0; applyView(); }
  function setFull(on) {
    view.full = on;
    applyView();
  }
  const pointIn = (shot, evt) => {
    const box = shot.getBoundingClientRect();
    return [evt.clientX - box.left, evt.clientY - box.top];
  };
  ws.addEventListener("wheel", (evt) => {
    const shot = evt.target.closest(".stage .shot");
    if (!shot) return;
    evt.preventDefault();
    zoomAt(Math.exp(-evt.deltaY * 0.002), ...pointIn(shot, evt));
  }, { passive: false });
  ws.addEventListener("dblclick", (evt) => {
    const shot = evt.target.closest(".stage .shot");
    if (!shot || picking) return;
    evt.preventDefault();
    if (view.z > 1) fit();
    else zoomAt(2.5, ...pointIn(shot, evt));
  });
  let pan = null;
  ws.addEventListener("mousedown", (evt) => {
    const shot = evt.target.closest(".stage .shot");
    if (!shot || picking || view.z === 1 || evt.button !== 0) return;
    evt.preventDefault();
    pan = { x: evt.clientX, y: evt.clientY };
    $("#ws-main .stage").classList.add("panning");
  });
  document.addEventListener("mousemove", (evt) => {
    if (!pan) return;
    panBy(evt.clientX - pan.x, evt.clientY - pan.y);
    pan = { x: evt.clientX, y: evt.clientY };
  });
  document.addEventListener("mouseup", () => {
    if (!pan) return;
    pan = null;
    const stage = $("#ws-main .stage");
    if (stage) stage.classList.remove("panning");
  });
  ws.addEventListener("click", (evt) => {
    if (evt.target.closest("#ws-zoom-fit")) fit();
    else if (evt.target.closest("#ws-full-button")) setFull(!view.full);
  });
  ws.addEventListener("change", (evt) => {
    if (evt.target.id !== "ws-show-after") return;
    view.after = evt.target.checked;
    localStorage.setItem("ws-after", view.after ? "on" : "off");
    applyView();
  });

  // ------------------------------------------------------------------ evidence picking
  let picking = null; // {input, fill}
  function startPick(button) {
    if (!button || button.closest("fieldset[disabled]")) return;
    picking = { input: $(button.dataset.pick), fill: button.dataset.fill ? $(button.dataset.fill) : null };
    $("#ws-shot") && $("#ws-shot").classList.add("picking");
    $("#ws-pick-hint") && ($("#ws-pick-hint").hidden = false);
  }
  function cancelPick() {
    picking = null;
    $("#ws-shot") && $("#ws-shot").classList.remove("picking");
    $("#ws-pick-hint") && ($("#ws-pick-hint").hidden = true);
    const draw = $("#ws-draw");
    draw && draw.setAttribute("width", 0);
  }
  function choose(evidence) {
    const { input, fill } = picking;
    input.value = JSON.stringify(evidence);
    if (fill && !fill.value && evidence.text) fill.value = evidence.text;
    cancelPick();
    showEvidence();
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }
  function showEvidence() {
    $$(".evidence-shown[data-for]").forEach((span) => {
      const input = $(span.dataset.for);
      if (!input || !input.value) return;
      const e = JSON.parse(input.value);
      span.textContent = (e.text ? `“${e.text}” ` : "") + (e.bounds ? `box ${e.bounds.join(",")}` : "");
    });
  }
  ws.addEventListener("click", (evt) => {
    const button = evt.target.closest("[data-pick]");
    if (button) startPick(button);
  });
  function svgPoint(svg, evt) {
    const box = svg.getBoundingClientRect();
    const vb = svg.viewBox.baseVal;
    return {
      x: Math.round(((evt.clientX - box.left) / box.width) * vb.width),
      y: Math.round(((evt.clientY - box.top) / box.height) * vb.height),
    };
  }
  let drawStart = null;
  ws.addEventListener("mousedown", (evt) => {
    const svg = evt.target.closest("#ws-xml");
    if (!svg || !picking) return;
    evt.preventDefault();
    drawStart = svgPoint(svg, evt);
  });
  ws.addEventListener("mousemove", (evt) => {
    if (!drawStart || !picking) return;
    const svg = $("#ws-xml");
    const p = svgPoint(svg, evt);
    const draw = $("#ws-draw");
    draw.setAttribute("x", Math.min(p.x, drawStart.x));
    draw.setAttribute("y", Math.min(p.y, drawStart.y));
    draw.setAttribute("width", Math.abs(p.x - drawStart.x));
    draw.setAttribute("height", Math.abs(p.y - drawStart.y));
  });
  ws.addEventListener("mouseup", (evt) => {
    if (!drawStart || !picking) return;
    const svg = $("#ws-xml");
    const p = svgPoint(svg, evt);
    const start = drawStart;
    drawStart = null;
    const unit = svg.viewBox.baseVal.width / 100;
    if (Math.abs(p.x - start.x) > unit && Math.abs(p.y - start.y) > unit) {
      choose({ bounds: [Math.min(p.x, start.x), Math.min(p.y, start.y), Math.max(p.x, start.x), Math.max(p.y, start.y)] });
      return;
    }
    // A click: the smallest element under the point.
    let best = null;
    $$("rect.el", svg).forEach((r) => {
      const x = +r.getAttribute("x"), y = +r.getAttribute("y");
      const w = +r.getAttribute("width"), h = +r.getAttribute("height");
      if (p.x >= x && p.x < x + w && p.y >= y && p.y < y + h && (!best || w * h < best.area)) {
        best = { area: w * h, target: JSON.parse(r.dataset.target) };
      }
    });
    if (best) {
      const t = best.target;
      const evidence = { bounds: t.bounds };
      for (const k of ["resource_id", "class", "text", "content_desc", "path"]) if (t[k]) evidence[k] = t[k];
      choose(evidence);
    }
  });

  // ------------------------------------------------------------------ boundary dragging
  let drag = null;
  let dragged = false;
  ws.addEventListener("mousedown", (evt) => {
    const handle = evt.target.closest("#ws-track .handle");
    if (!handle) return;
    evt.preventDefault();
    drag = { subgoal: handle.dataset.subgoal, edge: handle.dataset.edge, to: null };
    dragged = false;
    document.body.classList.add("dragging");
  });
  ws.addEventListener("mousemove", (evt) => {
    if (!drag) return;
    const cell = document.elementFromPoint(evt.clientX, evt.clientY)?.closest("#ws-track .cell");
    if (!cell) return;
    drag.to = Number(cell.dataset.step);
    $$("#ws-track .cell.drop").forEach((c) => c.classList.remove("drop"));
    cell.classList.add("drop");
  });
  document.addEventListener("mouseup", () => {
    if (!drag) return;
    const { subgoal, edge, to } = drag;
    drag = null;
    document.body.classList.remove("dragging");
    $$("#ws-track .cell.drop").forEach((c) => c.classList.remove("drop"));
    if (to === null) return;
    dragged = true;
    setTimeout(() => (dragged = false), 0);
    htmx.ajax("POST", ws.dataset.edit.replace("OP", "boundary"), {
      target: "#ws-main",
      swap: "outerHTML",
      // A dragged edge is the boundary shared with an adjacent neighbour: it moves along.
      values: { subgoal, [edge]: String(to), shared: "1", step: String(current()) },
    });
  });

  // ------------------------------------------------------------------ link drawing
  // Two clicks on the graph choose source and target; a relation's number key makes the
  // link (c before it marks it critical). The form below the graph does the same by hand.
  let linkFrom = null;
  let linkTo = null;
  const RELATIONS = ["prerequisite", "enables", "result_of", "blocks"];
  function linkHint(text) {
    const hint = $("#ws-link-hint");
    if (!hint) return;
    if (!hint.dataset.idle) hint.dataset.idle = hint.innerHTML;
    if (text) hint.textContent = text;
    else hint.innerHTML = hint.dataset.idle;
    hint.classList.toggle("linking", Boolean(text));
  }
  function cancelLink() {
    linkFrom = linkTo = null;
    $$("#ws-graph .node.from, #ws-graph .node.to").forEach((n) => n.classList.remove("from", "to"));
    linkHint("");
  }
  function makeLink(relation) {
    const critical = $("#ln-critical") && $("#ln-critical").checked;
    const values = { source: linkFrom, target: linkTo, relation, step: String(current()) };
    if (critical) values.critical = "on";
    cancelLink();
    htmx.ajax("POST", ws.dataset.edit.replace("OP", "link_add"), {
      target: "#ws-main", swap: "outerHTML", values,
    });
  }
  ws.addEventListener("click", (evt) => {
    const node = evt.target.closest("#ws-graph .node");
    if (!node || !$("#ws-link-form")) return;
    if (!linkFrom || linkTo) {
      cancelLink();
      linkFrom = node.dataset.key;
      node.classList.add("from");
      $("#ln-source").value = linkFrom;
      linkHint(`Link from ${linkFrom}: click the anchor it points to · Esc cancels`);
    } else {
      linkTo = node.dataset.key;
      node.classList.add("to");
      $("#ln-target").value = linkTo;
      linkHint(`${linkFrom} → ${linkTo}: press 1 prerequisite, 2 enables, 3 result of, 4 blocks` +
        ` · c critical · Esc cancels`);
    }
  });
  ws.addEventListener("dblclick", (evt) => {
    const node = evt.target.closest("#ws-graph .node");
    if (node) select(Number(node.dataset.step));
  });

  afterRender();
})();
