// The recording console: the live screen, gestures and keys turned into canonical actions.
// Frames are fetched only when changed (ETag); polling slows down while the screen is still
// and almost stops while the tab is hidden. Actions go through htmx: the recording panel
// comes back and is swapped in, and the next frame is fetched at once.
(function () {
  "use strict";
  const root = document.getElementById("console");
  if (!root) return;
  const d = root.dataset;
  const img = document.getElementById("screen");
  const live = document.getElementById("live");
  const xmlLayer = document.getElementById("xml-layer");
  const box = document.getElementById("box");
  const busy = document.getElementById("busy");
  const liveState = document.getElementById("live-state");
  const hoverInfo = document.getElementById("hover-info");
  const csrf = (document.body.getAttribute("hx-headers") || "").match(/"X-CSRFToken": "([^"]+)"/);
  const headers = csrf ? {"X-CSRFToken": csrf[1]} : {};
  let recording = d.recording === "1";
  live.dataset.steps = document.querySelector("#recording .rec")?.dataset.steps || "0";

  // ---------------------------------------------------------------- size and zoom
  // "fit": the screen is as tall as the window leaves room for under the navigation bar, the
  // whole of it in view. Zoomed in past that, it scrolls inside its frame; the zoom is kept
  // for the next visit. The pointer maps to device pixels from the picture drawn, at any zoom.
  const frame = document.getElementById("live-frame");
  const zoomLevel = document.getElementById("zoom-level");
  const info = document.querySelector(".screen-info");
  const deviceHeight = Number(d.height) || 1200;
  const ZOOM_KEY = `waypoint.console.zoom:${d.serial}`;
  const ZOOM_STEP = 1.25, ZOOM_MIN = 0.2, ZOOM_MAX = 3;
  let zoom = 0;  // CSS px per device px; 0: fit the window
  try { zoom = Number(localStorage.getItem(ZOOM_KEY)) || 0; } catch (e) { /* no storage */ }
  function fitScale() {
    const top = frame.getBoundingClientRect().top + window.scrollY;
    const border = live.offsetHeight - live.clientHeight;
    const room = window.innerHeight - top - border - info.offsetHeight - 8;
    return Math.max(240, room) / deviceHeight;
  }
  function applyZoom() {
    const fit = fitScale();
    const scale = zoom ? Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, zoom)) : fit;
    const border = live.offsetHeight - live.clientHeight;
    live.style.height = `${Math.round(deviceHeight * scale)}px`;
    frame.style.maxHeight = `${Math.round(deviceHeight * fit) + border}px`;
    zoomLevel.textContent = zoom ? `${Math.round(scale * 100)}%` : "fit";
    frame.classList.toggle("zoomed", scale > fit + 0.001);
  }
  function setZoom(value) {
    zoom = value && Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, value));
    try {
      if (zoom) localStorage.setItem(ZOOM_KEY, String(zoom));
      else localStorage.removeItem(ZOOM_KEY);
    } catch (e) { /* storage refused: the zoom lasts as long as the page */ }
    applyZoom();
  }
  const zoomIn = () => setZoom((zoom || fitScale()) * ZOOM_STEP);
  const zoomOut = () => setZoom((zoom || fitScale()) / ZOOM_STEP);
  document.getElementById("zoom-in").addEventListener("click", zoomIn);
  document.getElementById("zoom-out").addEventListener("click", zoomOut);
  document.getElementById("zoom-fit").addEventListener("click", () => setZoom(0));
  window.addEventListener("resize", applyZoom);
  applyZoom();

  // The whole instruction of the task picked in the start form.
  const taskSelect = document.getElementById("task");
  const taskGoal = document.getElementById("task-goal");
  function showTaskGoal() {
    const goal = taskSelect.selectedOptions[0]?.title || "";
    taskGoal.textContent = goal;
    taskGoal.hidden = !goal;
  }
  if (taskSelect && taskGoal) {
    taskSelect.addEventListener("change", showTaskGoal);
    showTaskGoal();
  }

  // ---------------------------------------------------------------- live view
  // The indicator says whether the picture is the device's screen now: "live" while the last
  // poll (a new frame or a 304) came back within STALE_MS, "stale" when none has for longer,
  // "disconnected" when the last poll failed; with the age of the frame shown.
  const FAST = Number(d.frameMs) || 200, SLOW = 2000, HIDDEN = 10000, STALE_MS = 5000;
  const ACTING_MS = 50;
  let etag = "", delay = FAST, timer = null, inFlight = false;
  let objectUrl = null, confirmedAt = 0, failure = "", acting = false;

  async function poll() {
    clearTimeout(timer);
    if (inFlight) return;
    inFlight = true;
    let changed = false;
    try {
      const response = await fetch(d.frameUrl, {
        cache: "no-store", headers: etag ? {"If-None-Match": etag} : {},
      });
      if (response.status === 200) {
        const blob = await response.blob();
        etag = response.headers.get("ETag") || "";
        if (objectUrl) URL.revokeObjectURL(objectUrl);
        objectUrl = URL.createObjectURL(blob);
        img.src = objectUrl;
        changed = true;
        live.dataset.etag = etag;
      }
      if (response.status === 200 || response.status === 304) {
        confirmedAt = Date.now(); failure = "";
      } else {
        failure = (await response.text()).slice(0, 200) || `the server answered ${response.status}`;
      }
    } catch (e) {  // the server restarts or the network blinks: try again later
      failure = "no answer from the server";
    }
    inFlight = false;
    showLiveState();
    delay = document.hidden ? HIDDEN : acting ? ACTING_MS : changed ? FAST
      : Math.min(SLOW, Math.round(delay * 1.5));
    timer = setTimeout(poll, delay);
  }
  function pollNow() { delay = FAST; if (!inFlight) poll(); }
  document.addEventListener("visibilitychange", () => { if (!document.hidden) pollNow(); });

  function age(ms) {
    const s = ms / 1000;
    return s < 10 ? `${s.toFixed(1)} s` : s < 120 ? `${Math.round(s)} s` : `${Math.round(s / 60)} min`;
  }
  function showLiveState() {
    const since = confirmedAt ? Date.now() - confirmedAt : null;
    const state = failure ? "disconnected" : since === null ? "connecting"
      : since > STALE_MS ? "stale" : "live";
    const frameAge = since === null ? "no frame yet" : `frame ${age(since)} old`;
    liveState.dataset.state = state;
    liveState.querySelector(".word").textContent = state;
    liveState.querySelector(".age").textContent = frameAge;
    liveState.title = failure ? `The device's screen cannot be fetched: ${failure}. Retrying.`
      : state === "stale" ? "No answer about the screen for a while: it may have changed since."
      : "The picture is the device's screen now (checked a moment ago).";
  }
  setInterval(showLiveState, 500);
  poll();

  // ---------------------------------------------------------------- lease heartbeat
  // Renewed as soon as the page loads (a reload, or a link back after a while away, comes
  // with little of the lease left), whenever the tab is shown again, and every third of it.
  let shownNotice = "";
  async function heartbeat() {
    let r;
    try {
      r = await fetch(d.heartbeatUrl, {method: "POST", headers});
    } catch (e) {
      return;  // the server restarts or the network blinks: the next beat tries again
    }
    if (r.status === 409) {
      const body = await r.json();
      showError(body.detail + " Reload the page.");
      recording = false;
    } else if (r.ok) {
      const body = await r.json();
      if (body.notice && body.notice !== shownNotice) {
        shownNotice = body.notice;
        showError(body.notice, "notice");
      }
    }
  }
  if (d.driving === "1") {
    const every = Math.max(5, Math.floor((Number(d.leaseSeconds) || 60) / 3)) * 1000;
    heartbeat();
    setInterval(heartbeat, every);
    document.addEventListener("visibilitychange", () => { if (!document.hidden) heartbeat(); });
  }

  function showError(text, className) {
    const panel = document.getElementById("recording");
    const p = document.createElement("p");
    p.className = className || "error"; p.setAttribute("role", "alert"); p.textContent = text;
    panel.prepend(p);
  }

  // ---------------------------------------------------------------- acting
  // Every action is done, in the order given, however fast: one given while another runs (a
  // second tap 150 ms after the first, four quick u) waits its turn, as the workspace's keys
  // do. While an action runs the live view asks for the screen ACTING_MS after each answer:
  // the new screen shows as soon as the device draws it, not once the step is stored.
  const queue = [];
  function act(values, url, stale) {
    if (!recording) return Promise.resolve();
    return new Promise((resolve) => {
      queue.push({values, url: url || d.actUrl, stale, resolve});
      next();
    });
  }
  function showBusy() {
    busy.hidden = !acting;
    busy.textContent = queue.length ? `recording… ${queue.length} more waiting` : "recording…";
    live.dataset.waiting = String(queue.length);
  }
  function next() {
    if (acting) { showBusy(); return; }
    const item = queue.shift();
    if (!item) { showBusy(); return; }
    // A memory target names the screen it was marked on: after another step it would not.
    const why = item.stale && item.stale();
    if (why) {
      showError(why);
      item.resolve();
      next();
      return;
    }
    acting = true;
    showBusy();
    pollNow();
    htmx.ajax("POST", item.url, {target: "#recording", swap: "innerHTML", values: item.values,
                                 headers})
      .catch(() => showError("No answer from the server: that action may not have been recorded."))
      // The panel swapped in is settled by htmx after its settle delay: then the next may act.
      .then(() => new Promise((done) => setTimeout(done, htmx.config.defaultSettleDelay)))
      .finally(() => {
        acting = false;
        item.resolve();
        pollNow();
        if (!recording && queue.length) {
          showError(`${queue.length} waiting action${queue.length > 1 ? "s were" : " was"} ` +
                    "not sent: the recording has stopped.");
          queue.splice(0).forEach((waiting) => waiting.resolve());
        }
        next();
      });
  }

  document.body.addEventListener("htmx:afterSwap", (e) => {
    if (e.detail.target.id !== "recording") return;
    const rec = document.querySelector("#recording .rec");
    const stillRecording = !!document.querySelector("#finish-form");
    if (!stillRecording && recording) {
      recording = false;
      document.getElementById("controls")?.classList.add("disabled");
    }
    const selected = document.querySelector("#filmstrip .frame.selected");
    selected?.scrollIntoView({block: "nearest", inline: "nearest"});
    if (rec) live.dataset.steps = rec.dataset.steps;
  });

  // Client pixels → device pixels of the screenshot. The image is fitted into its box
  // (object-fit: contain), so measure from the picture drawn, not from the box around it:
  // a box of another shape leaves bands above and below (or beside) the picture.
  function devicePoint(event) {
    const rect = img.getBoundingClientRect();
    const w = img.naturalWidth || Number(d.width), h = img.naturalHeight || Number(d.height);
    const scale = Math.min(rect.width / w, rect.height / h);
    const left = rect.left + (rect.width - w * scale) / 2;
    const top = rect.top + (rect.height - h * scale) / 2;
    const x = Math.floor((event.clientX - left) / scale);
    const y = Math.floor((event.clientY - top) / scale);
    return {x: Math.max(0, Math.min(w - 1, x)), y: Math.max(0, Math.min(h - 1, y))};
  }
  function showBox(a, b) {
    const w = img.naturalWidth, h = img.naturalHeight;
    const x1 = Math.min(a.x, b.x), y1 = Math.min(a.y, b.y);
    Object.assign(box.style, {
      left: `${100 * x1 / w}%`, top: `${100 * y1 / h}%`,
      width: `${100 * Math.abs(b.x - a.x) / w}%`, height: `${100 * Math.abs(b.y - a.y) / h}%`,
    });
    box.hidden = false;
  }

  const markToggle = document.getElementById("toggle-mark");
  const xmlToggle = document.getElementById("toggle-xml");
  let down = null;
  live.addEventListener("pointerdown", (e) => {
    if (!recording || e.button !== 0 || e.target.closest(".xml-el")) return;
    live.setPointerCapture(e.pointerId);
    down = {p: devicePoint(e), t: performance.now(), cx: e.clientX, cy: e.clientY};
    e.preventDefault();  // no text selection or image drag; so leave the text fields by hand:
    if (document.activeElement?.matches("input, textarea, select")) document.activeElement.blur();
  });
  live.addEventListener("pointermove", (e) => {
    if (down && markToggle?.checked) showBox(down.p, devicePoint(e));
  });
  live.addEventListener("pointerup", (e) => {
    if (!down) return;
    const start = down; down = null;
    const end = devicePoint(e);
    const ms = Math.round(performance.now() - start.t);
    const moved = Math.hypot(e.clientX - start.cx, e.clientY - start.cy) > 8;
    if (markToggle?.checked) {
      box.hidden = true;
      if (moved) markMemory([start.p.x, start.p.y, end.x, end.y], "", "box");
      return;
    }
    if (moved) {
      act({type: "swipe", x: start.p.x, y: start.p.y, x2: end.x, y2: end.y,
           duration_ms: Math.max(100, Math.min(2000, ms))});
    } else if (ms >= 500) {
      act({type: "long_press", x: start.p.x, y: start.p.y, duration_ms: Math.min(ms, 3000)});
    } else {
      act({type: "click", x: start.p.x, y: start.p.y});
    }
  });

  // Marking a value opens the editor under the controls, with the box still drawn on the
  // screen: a key, and a value that, left empty, is the element's text (found by the server).
  const markForm = document.getElementById("mark-form");
  const markKey = document.getElementById("mark-key");
  const markValue = document.getElementById("mark-value");
  let marking = null;
  function markMemory(bounds, value, source) {
    const [x1, y1, x2, y2] = bounds;
    const ordered = [Math.min(x1, x2), Math.min(y1, y2), Math.max(x1, x2), Math.max(y1, y2)];
    marking = {bounds: ordered, source, steps: live.dataset.steps};
    showBox({x: ordered[0], y: ordered[1]}, {x: ordered[2], y: ordered[3]});
    document.getElementById("mark-where").textContent =
      `${source === "element" ? "element" : "box"} [${ordered.join(", ")}]`;
    const keys = [...document.querySelectorAll("#memory-targets .mt-key")].map((i) => i.value);
    document.getElementById("mark-keys").replaceChildren(...keys.map((k) => new Option(k)));
    markValue.value = value || "";
    markForm.hidden = false;
    markKey.focus();
    markKey.select();
  }
  function closeMark() {
    marking = null; markForm.hidden = true; box.hidden = true;
  }
  markForm?.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!marking || !markKey.value.trim()) return;
    // The version of the labels the panel shows: a mark made on an older one is refused.
    const version = document.querySelector("#recording .rec")?.dataset.version || "";
    const values = {key: markKey.value.trim(), value: markValue.value,
                    bounds: marking.bounds.join(","), source: marking.source, version};
    const steps = marking.steps;
    closeMark();
    act(values, d.memoryUrl, () => live.dataset.steps === steps ? "" :
      "The screen changed (another step was recorded) before the memory target was saved: " +
      "mark it again on the screen shown now.");
  });
  document.getElementById("mark-cancel")?.addEventListener("click", closeMark);
  markForm?.addEventListener("keydown", (e) => { if (e.key === "Escape") closeMark(); });

  // ---------------------------------------------------------------- XML overlay
  async function showElements() {
    const r = await fetch(d.elementsUrl, {cache: "no-store"});
    if (!r.ok) return;
    const data = await r.json();
    const w = img.naturalWidth || data.width, h = img.naturalHeight || data.height;
    xmlLayer.replaceChildren();
    // Largest first, so smaller (deeper) elements sit on top and get the hover.
    const items = data.elements.slice().sort((a, b) =>
      (b.bounds[2] - b.bounds[0]) * (b.bounds[3] - b.bounds[1]) -
      (a.bounds[2] - a.bounds[0]) * (a.bounds[3] - a.bounds[1]));
    for (const el of items) {
      const [x1, y1, x2, y2] = el.bounds;
      const div = document.createElement("div");
      div.className = "xml-el" + (el.clickable ? " clickable" : "");
      Object.assign(div.style, {
        left: `${100 * x1 / w}%`, top: `${100 * y1 / h}%`,
        width: `${100 * (x2 - x1) / w}%`, height: `${100 * (y2 - y1) / h}%`,
      });
      const label = [el.class.split(".").pop(), el.resource_id, el.text && `"${el.text}"`,
                     el.content_desc && `desc="${el.content_desc}"`, `[${el.bounds.join(",")}]`]
        .filter(Boolean).join("  ");
      div.title = label;
      div.addEventListener("mouseenter", () => { hoverInfo.textContent = label; });
      div.addEventListener("click", (e) => {
        e.stopPropagation();
        if (markToggle?.checked) {
          markMemory(el.bounds, el.text || el.content_desc, "element");
        } else {
          act({type: "click", x: Math.floor((x1 + x2) / 2), y: Math.floor((y1 + y2) / 2)})
            .then(() => { if (xmlToggle.checked) setTimeout(showElements, 300); });
        }
      });
      xmlLayer.appendChild(div);
    }
    xmlLayer.hidden = false;
  }
  xmlToggle?.addEventListener("change", () => {
    if (xmlToggle.checked) showElements(); else { xmlLayer.hidden = true; hoverInfo.textContent = ""; }
  });

  // ---------------------------------------------------------------- buttons, forms, keys
  document.querySelectorAll("[data-action]").forEach((button) => {
    button.addEventListener("click", () => {
      const type = button.dataset.action;
      act(type === "wait" ? {type, duration_ms: 1000} : {type});
    });
  });
  document.getElementById("type-form")?.addEventListener("submit", (e) => {
    e.preventDefault();
    const input = document.getElementById("type-text");
    if (!input.value) return;
    const text = input.value;
    // Cleared once typed, unless more was written meanwhile (the action may have waited).
    act({type: "type", text}).then(() => {
      if (input.value === text && !document.getElementById("type-anyway")) input.value = "";
    });
  });
  // Refused for want of a focused text field: the person may know better (an app whose UI XML
  // does not say what has focus).
  document.getElementById("recording").addEventListener("click", (e) => {
    const anyway = e.target.closest("#type-anyway");
    if (anyway) act({type: "type", text: anyway.dataset.text, type_anyway: "1"});
  });
  document.getElementById("open-form")?.addEventListener("submit", (e) => {
    e.preventDefault();
    act({type: "open_app", package: document.getElementById("open-package").value});
  });

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target.closest("input, textarea, select")) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    const zoomKeys = {"+": zoomIn, "=": zoomIn, "-": zoomOut, 0: () => setZoom(0)};
    if (zoomKeys[e.key]) { e.preventDefault(); zoomKeys[e.key](); return; }
    if (!recording) return;
    const keys = {
      b: () => act({type: "back"}), h: () => act({type: "home"}),
      e: () => act({type: "enter"}), w: () => act({type: "wait", duration_ms: 1000}),
      t: () => document.getElementById("type-text")?.focus(),
      o: () => document.getElementById("open-package")?.focus(),
      f: () => document.getElementById("answer")?.focus(),
      // The key undoes at once (the button asks first): four quick u are four undos.
      u: () => act({}, d.undoUrl),
      x: () => { xmlToggle.checked = !xmlToggle.checked; xmlToggle.dispatchEvent(new Event("change")); },
      m: () => { markToggle.checked = !markToggle.checked; },
    };
    const run = keys[e.key];
    if (run) { e.preventDefault(); run(); }
  });
})();
