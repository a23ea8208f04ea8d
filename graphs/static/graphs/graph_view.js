// The graph page: pan and zoom the server-drawn SVG, filter it, open node and edge panels.
(function () {
  "use strict";
  const svg = document.getElementById("graph-svg");
  if (!svg) return;
  const panel = document.getElementById("graph-panel");
  const full = { x: 0, y: 0, w: +svg.dataset.width, h: +svg.dataset.height };
  let view = Object.assign({}, full);

  function apply() {
    svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  }

  function zoom(factor, cx, cy) {
    // Keep the point under the cursor where it is; never zoom out past twice the whole graph.
    const w = Math.min(Math.max(view.w * factor, full.w / 40), full.w * 2);
    const h = w * (view.h / view.w);
    if (cx === undefined) { cx = view.x + view.w / 2; cy = view.y + view.h / 2; }
    view = { x: cx - (cx - view.x) * (w / view.w), y: cy - (cy - view.y) * (h / view.h), w, h };
    apply();
  }

  function toGraph(evt) {
    const box = svg.getBoundingClientRect();
    // preserveAspectRatio "xMidYMid meet": one scale, centred.
    const scale = Math.max(view.w / box.width, view.h / box.height);
    const ox = (box.width * scale - view.w) / 2, oy = (box.height * scale - view.h) / 2;
    return { x: view.x - ox + (evt.clientX - box.left) * scale, y: view.y - oy + (evt.clientY - box.top) * scale, scale };
  }

  svg.addEventListener("wheel", (evt) => {
    evt.preventDefault();
    const p = toGraph(evt);
    zoom(evt.deltaY > 0 ? 1.15 : 1 / 1.15, p.x, p.y);
  }, { passive: false });

  let drag = null;
  svg.addEventListener("pointerdown", (evt) => {
    if (evt.button !== 0) return;
    drag = { start: toGraph(evt), view: Object.assign({}, view), moved: false };
  });
  window.addEventListener("pointermove", (evt) => {
    if (!drag) return;
    const box = svg.getBoundingClientRect();
    const scale = drag.start.scale;
    const dx = (evt.clientX - box.left) * scale - (drag.start.x - drag.view.x + (box.width * scale - drag.view.w) / 2);
    const dy = (evt.clientY - box.top) * scale - (drag.start.y - drag.view.y + (box.height * scale - drag.view.h) / 2);
    if (Math.abs(dx) + Math.abs(dy) > 3 * scale) drag.moved = true;
    if (!drag.moved) return;
    view = Object.assign({}, drag.view, { x: drag.view.x - dx, y: drag.view.y - dy });
    svg.classList.add("panning");
    apply();
  });
  window.addEventListener("pointerup", () => {
    setTimeout(() => { drag = null; svg.classList.remove("panning"); }, 0);
  });

  document.querySelectorAll("[data-zoom]").forEach((button) => {
    button.addEventListener("click", () => {
      const how = button.dataset.zoom;
      if (how === "fit") { view = Object.assign({}, full); apply(); }
      else zoom(how === "in" ? 1 / 1.4 : 1.4);
    });
  });

  function select(selector) {
    svg.querySelectorAll(".selected").forEach((el) => el.classList.remove("selected"));
    if (selector) svg.querySelectorAll(selector).forEach((el) => el.classList.add("selected"));
  }

  function open(url, selector) {
    select(selector);
    htmx.ajax("GET", url, { target: "#graph-panel", swap: "innerHTML" }).then(() => { panel.scrollTop = 0; });
  }

  function openNode(id) {
    open(svg.dataset.nodeUrl.replace("NODE", encodeURIComponent(id)), `.node[data-node="${CSS.escape(id)}"]`);
  }

  function openEdge(id) {
    open(svg.dataset.edgeUrl.replace("EDGE", encodeURIComponent(id)), `.edge-group[data-edge="${CSS.escape(id)}"]`);
  }

  svg.addEventListener("click", (evt) => {
    if (drag && drag.moved) return;
    const node = evt.target.closest(".node");
    if (node) { openNode(node.dataset.node); return; }
    const edge = evt.target.closest(".edge-group");
    if (edge) openEdge(edge.dataset.edge);
  });
  svg.addEventListener("keydown", (evt) => {
    const node = evt.target.closest(".node");
    if (node && (evt.key === "Enter" || evt.key === " ")) { evt.preventDefault(); openNode(node.dataset.node); }
  });

  // Links inside the panel open another node or edge of the drawing.
  panel.addEventListener("click", (evt) => {
    const link = evt.target.closest("[data-open-node], [data-open-edge]");
    if (!link) return;
    evt.preventDefault();
    if (link.dataset.openNode !== undefined) openNode(link.dataset.openNode);
    else openEdge(link.dataset.openEdge);
  });

  // Filters: an app (nodes of other apps fade, edges between them hide); success or kind.
  const filters = document.getElementById("graph-filters");
  function filter() {
    const app = filters.querySelector("[name=app]");
    const chosen = app ? app.value : "";
    const shown = new Set(Array.from(filters.querySelectorAll("input[type=checkbox]:checked"), (c) => c.value));
    const hiddenNodes = new Set();
    svg.querySelectorAll(".node").forEach((n) => {
      const off = chosen && n.dataset.app !== chosen;
      n.classList.toggle("filtered", !!off);
      if (off) hiddenNodes.add(n.dataset.node);
    });
    svg.querySelectorAll(".edge-group").forEach((e) => {
      const value = e.dataset.success || e.dataset.kind;
      const off = !shown.has(value) || hiddenNodes.has(e.dataset.source) || (hiddenNodes.has(e.dataset.target) && chosen);
      e.classList.toggle("filtered", off);
    });
  }
  filters.addEventListener("change", filter);
  filter();

  // A link to #node-3 (from the retrieval page) opens that node.
  const wanted = /^#node-(.+)$/.exec(window.location.hash);
  if (wanted && svg.querySelector(`.node[data-node="${CSS.escape(wanted[1])}"]`)) openNode(wanted[1]);
})();
