// Walks the system page and the foreground app's DOM into uiautomator-like nodes.
// Returns {windows: [node], vars: [{package, name, text, bounds}]}; bounds in CSS pixels of the
// top page ([x1, y1, x2, y2]); Python scales them to device pixels and writes the XML.
(() => {
  const SKIP = new Set(["SCRIPT", "STYLE", "TEMPLATE", "HEAD", "META", "LINK", "TITLE", "NOSCRIPT", "BR"]);
  const INLINE = new Set(["SPAN", "B", "STRONG", "EM", "I", "SMALL", "SUP", "SUB", "U", "MARK", "ABBR", "TIME", "DATA"]);
  const CLICK_ROLES = new Set(["button", "link", "tab", "checkbox", "switch", "menuitem", "radio", "option"]);
  const vars = [];

  function klass(el, style) {
    const tag = el.tagName;
    const role = el.getAttribute("role");
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (el.dataset.class) return el.dataset.class;
    if (tag === "IFRAME") return "android.widget.FrameLayout";
    if (tag === "INPUT") {
      if (type === "checkbox") return "android.widget.CheckBox";
      if (type === "radio") return "android.widget.RadioButton";
      if (type === "range") return "android.widget.SeekBar";
      if (type === "button" || type === "submit") return "android.widget.Button";
      return "android.widget.EditText";
    }
    if (tag === "TEXTAREA") return "android.widget.EditText";
    if (tag === "SELECT") return "android.widget.Spinner";
    if (tag === "BUTTON" || role === "button") return "android.widget.Button";
    if (role === "switch") return "android.widget.Switch";
    if (role === "checkbox") return "android.widget.CheckBox";
    if (tag === "IMG" || tag === "SVG" || tag === "CANVAS" || role === "img") return "android.widget.ImageView";
    if (tag === "UL" || tag === "OL" || role === "list") return "androidx.recyclerview.widget.RecyclerView";
    if (el.__scrollable) return el.__scrollableX ? "android.widget.HorizontalScrollView" : "android.widget.ScrollView";
    if (ownText(el)) return "android.widget.TextView";
    if (style.display.includes("flex") || style.display.includes("grid")) return "android.widget.LinearLayout";
    return "android.view.ViewGroup";
  }

  function ownText(el) {
    let text = "";
    for (const child of el.childNodes) {
      if (child.nodeType === 3) text += child.textContent;
      else if (absorbed(child)) text += child.textContent;
    }
    return text.replace(/\s+/g, " ").trim();
  }

  // Plain inline markup (a <b> inside a sentence) is part of its parent's text, not a node.
  function absorbed(el) {
    return el.nodeType === 1 && INLINE.has(el.tagName) && !isSignificant(el)
      && el.getAttribute("aria-hidden") !== "true" && !el.children.length;
  }

  function isSignificant(el) {
    return el.id || el.dataset.testid || el.dataset.var || el.getAttribute("aria-label") || el.onclick
      || el.getAttribute("role") || getComputedStyle(el).cursor === "pointer";
  }

  function clickable(el, style) {
    const tag = el.tagName;
    if (el.disabled) return false;
    if (["BUTTON", "SELECT", "TEXTAREA", "SUMMARY"].includes(tag)) return true;
    if (tag === "INPUT") return true;
    if (tag === "A" && el.hasAttribute("href")) return true;
    if (CLICK_ROLES.has(el.getAttribute("role"))) return true;
    if (el.onclick || el.hasAttribute("onclick") || el.dataset.action) return true;
    return style.cursor === "pointer" && !(el.parentElement && getComputedStyle(el.parentElement).cursor === "pointer");
  }

  function intersect(a, b) {
    const r = [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
    return r[2] > r[0] && r[3] > r[1] ? r : null;
  }

  function walk(el, ctx) {
    // ctx: {dx, dy, clip, pkg, doc, focused}
    if (SKIP.has(el.tagName)) return [];
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden" || el.getAttribute("aria-hidden") === "true") return [];
    if (el.dataset && el.dataset.window && el.dataset.window !== "app" && ctx.skipSystem) return [];
    if (el.classList && el.classList.contains("window") && !el.classList.contains("front")) return [];
    const r = el.getBoundingClientRect();
    const box = [r.left + ctx.dx, r.top + ctx.dy, r.right + ctx.dx, r.bottom + ctx.dy];
    const visible = intersect(box, ctx.clip);
    const pkg = (el.dataset && el.dataset.package) || ctx.pkg;

    if (el.dataset && el.dataset.var && visible && parseFloat(style.opacity) > 0) {
      vars.push({package: pkg, name: el.dataset.var, text: el.textContent.trim(), bounds: visible});
    }

    let childClip = ctx.clip;
    const overflowY = style.overflowY, overflowX = style.overflowX;
    const scrollY = (overflowY === "auto" || overflowY === "scroll") && el.scrollHeight > el.clientHeight + 1;
    const scrollX = (overflowX === "auto" || overflowX === "scroll") && el.scrollWidth > el.clientWidth + 1;
    el.__scrollable = scrollY || scrollX;
    el.__scrollableX = scrollX && !scrollY;
    if (overflowY !== "visible" || overflowX !== "visible") childClip = visible || [0, 0, 0, 0];

    let children = [];
    if (el.tagName === "IFRAME") {
      const doc = el.contentDocument;
      if (doc && doc.body && visible) {
        const frameCtx = {dx: box[0], dy: box[1], clip: visible, pkg, doc, focused: ctx.focused};
        children = walk(doc.body, frameCtx);
      }
    } else if (visible || ctx.clip === null) {
      for (const child of el.children) {
        if (!absorbed(child)) children.push(...walk(child, {...ctx, pkg, clip: childClip}));
      }
    }
    if (!visible) return children;

    const text = el.tagName === "INPUT" || el.tagName === "TEXTAREA"
      ? (el.type === "password" ? "•".repeat(el.value.length) : el.value) || el.placeholder || ""
      : el.tagName === "SELECT" ? (el.selectedOptions[0] ? el.selectedOptions[0].textContent.trim() : "")
      : (el.tagName === "IMG" ? "" : ownText(el));
    const click = clickable(el, style);
    const isField = el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT";
    const meaningful = text || click || isField || el.__scrollable || el.tagName === "IFRAME"
      || el.id || (el.dataset && (el.dataset.testid || el.dataset.window)) || el.getAttribute("aria-label")
      || el.tagName === "IMG" || el === ctx.doc.body;
    if (!meaningful && children.length < 2) return children;

    const type = (el.getAttribute("type") || "").toLowerCase();
    const role = el.getAttribute("role");
    const checkable = type === "checkbox" || type === "radio" || role === "switch" || role === "checkbox";
    const doc = el.ownerDocument;
    return [{
      cls: klass(el, style),
      text,
      id: (el.dataset && el.dataset.testid) || el.id || "",
      desc: el.getAttribute("aria-label") || el.getAttribute("alt") || "",
      pkg,
      checkable,
      checked: !!(el.checked || el.getAttribute("aria-checked") === "true"),
      clickable: click,
      enabled: !el.disabled && el.getAttribute("aria-disabled") !== "true",
      focusable: isField || click || el.tabIndex >= 0,
      focused: doc.activeElement === el && doc.hasFocus() && el !== doc.body,
      scrollable: !!el.__scrollable,
      longClickable: !!(el.dataset && el.dataset.longpress),
      password: type === "password",
      selected: el.getAttribute("aria-selected") === "true" || el.getAttribute("aria-current") === "page",
      bounds: visible,
      children,
    }];
  }

  const vw = window.innerWidth, vh = window.innerHeight;
  const screen = [0, 0, vw, vh];
  const windows = [];
  const ctx = {dx: 0, dy: 0, clip: screen, pkg: "com.android.systemui", doc: document};
  const stage = document.getElementById("stage");
  const front = wpSystem.front;
  // The app window fills the whole screen on a phone (edge to edge); system windows sit on top.
  const appNodes = walk(front, {...ctx, pkg: front.dataset.package});
  const appRoot = {cls: "android.widget.FrameLayout", text: "", id: "", desc: "", pkg: front.dataset.package,
    checkable: false, checked: false, clickable: false, enabled: true, focusable: false, focused: false,
    scrollable: false, longClickable: false, password: false, selected: false, bounds: screen, children: appNodes};
  windows.push(appRoot);
  for (const id of ["keyboard", "statusbar", "navbar"]) {
    const el = document.getElementById(id);
    windows.push(...walk(el, {...ctx, pkg: el.dataset.package}));
  }
  return {windows, vars, stage: stage.getBoundingClientRect().toJSON()};
})()
