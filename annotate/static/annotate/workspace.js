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
    } else if (code === 200) {
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
      frame.scrollIntoView({ block: "nearest", inline: "center" });
    }
    $$("#ws-track .cell.current, #ws-proposed .cell.current").forEach((c) => c.classList.remove("current"));
    $$(`#ws-track .cell[data-step="${index}"], #ws-proposed .cell[data-step="${index}"]`).forEach(
      (c) => c.classList.add("current"));
    const url = new URL(window.location);
    url.searchParams.set("step", index);
    history.replaceState(null, "", url);
  }
  function afterRender() {
    markSelected(current());
    showEvidence();
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
  document.addEventListener("keydown", (evt) => {
    const key = evt.key;
    const mod = evt.ctrlKey || evt.metaKey;
    if (mod && key.toLowerCase() === "s") {
      evt.preventDefault();
      flush();
      return;
    }
    if (key === "Escape") {
      if (picking) return cancelPick();
      if (!$("#ws-help").hidden) { $("#ws-help").hidden = true; return; }
      if (typing(document.activeElement)) document.activeElement.blur();
      return;
    }
    if (typing(evt.target)) return; // text fields keep their keys (and their own undo)
    if (mod && key.toLowerCase() === "z") {
      evt.preventDefault();
      const button = evt.shiftKey ? $("#ws-redo") : $("#ws-undo");
      if (button && !button.disabled) button.click();
      return;
    }
    if (mod || evt.altKey) return;
    const click = (sel) => { const el = $(sel); if (el && !el.disabled) el.click(); };
    switch (key) {
      case "j": case "ArrowRight": evt.preventDefault(); select(current() + 1); break;
      case "k": case "ArrowLeft": evt.preventDefault(); select(current() - 1); break;
      case "s": click("#ws-split"); break;
      case "m": click("#ws-merge"); break;
      case "1": case "2": case "3": {
        const radios = $$("#ws-subgoal-form input[name=success]");
        const radio = radios[Number(key) - 1];
        if (radio && !radio.disabled) {
          radio.checked = true;
          radio.dispatchEvent(new Event("change", { bubbles: true }));
        }
        break;
      }
      case "t": evt.preventDefault(); $("#sg-text") && $("#sg-text").focus(); break;
      case "a":
        evt.preventDefault();
        $("#ws-anchor-new").open = true;
        $("#an-content").focus();
        break;
      case "r":
        evt.preventDefault();
        $("#ws-memory-new").open = true;
        $("#mt-key").focus();
        break;
      case "p": {
        const target = $("#ws-anchor-new").contains(document.activeElement) ? "#an-evidence" : "#mt-evidence";
        startPick($(`[data-pick="${target}"]`));
        break;
      }
      case "y": click(".pr-accept.here"); break; // the proposed item on this step
      case "n": click(".pr-reject.here"); break;
      case "?": $("#ws-help").hidden = !$("#ws-help").hidden; break;
    }
  });
  ws.addEventListener("click", (evt) => {
    if (evt.target.closest("#ws-help-button")) $("#ws-help").hidden = !$("#ws-help").hidden;
    else if (evt.target.closest("#ws-help")) $("#ws-help").hidden = true;
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
      values: { subgoal, [edge]: String(to), step: String(current()) },
    });
  });

  // ------------------------------------------------------------------ link drawing
  let linkFrom = null;
  ws.addEventListener("click", (evt) => {
    const node = evt.target.closest("#ws-graph .node");
    if (!node || !$("#ws-link-form")) return;
    if (!linkFrom) {
      linkFrom = node.dataset.key;
      $$("#ws-graph .node.from").forEach((n) => n.classList.remove("from"));
      node.classList.add("from");
      $("#ln-source").value = linkFrom;
    } else {
      $("#ln-target").value = node.dataset.key;
      $$("#ws-graph .node.from").forEach((n) => n.classList.remove("from"));
      linkFrom = null;
      $("#ln-relation").focus();
    }
  });
  ws.addEventListener("dblclick", (evt) => {
    const node = evt.target.closest("#ws-graph .node");
    if (node) select(Number(node.dataset.step));
  });

  afterRender();
})();
