// Walks the foreground app's DOM into uiautomator-like nodes, as a phone dumps its active window:
// one root (the app's decor view) holding the app's content and the bar backgrounds; the status
// bar, navigation bar and keyboard are other windows and are left out. Like uiautomator, only
// what is visible is dumped: bounds are clipped to what shows, and what is scrolled out of view
// or hidden under another view (a sticky header, a bottom bar, a toast) is cut or left out.
// Returns {windows: [root], vars: [{package, name, text, bounds}]}; bounds in CSS pixels of the
// top page ([x1, y1, x2, y2]); Python scales them to device pixels and writes the XML.
(() => {
  const SKIP = new Set(["SCRIPT", "STYLE", "TEMPLATE", "HEAD", "META", "LINK", "TITLE", "NOSCRIPT", "BR"]);
  const INLINE = new Set(["SPAN", "B", "STRONG", "EM", "I", "SMALL", "SUP", "SUB", "U", "MARK", "ABBR", "TIME", "DATA"]);
  const CLICK_ROLES = new Set(["button", "link", "tab", "checkbox", "switch", "menuitem", "radio", "option"]);
  const TEXT_BEARING = new Set(["android.widget.Button", "android.widget.TextView", "android.widget.CheckBox",
    "android.widget.RadioButton", "android.widget.Switch"]);
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
    if (tag === "HEADER" || role === "toolbar") return "android.widget.Toolbar";
    if (el.__scrollable) return el.__scrollableX ? "android.widget.HorizontalScrollView" : "android.widget.ScrollView";
    if (ownText(el)) return "android.widget.TextView";
    if (style.display.includes("flex") || style.display.includes("grid")) return "android.widget.LinearLayout";
    return "android.view.ViewGroup";
  }

  function ownText(el) {
    let text = "";
    for (const child of el.childNodes) {
      if (child.nodeType === 3) text += child.textContent;
      else if (absorbed(child)) text += shownInline(child) ? child.textContent : ` ${child.textContent} `;
    }
    return text.replace(/\s+/g, " ").trim();
  }

  // An inline tag styled as a block (a message's time under its text) is a line of its own.
  function shownInline(el) {
    return getComputedStyle(el).display.startsWith("inline");
  }

  // Plain inline markup (a <b> inside a sentence) is part of its parent's text, not a node;
  // unless a sibling is a view of its own: then each is its own text view, side by side (a price
  // and the crossed-out old price), rather than one text view holding another.
  function absorbed(el) {
    if (!plainInline(el)) return false;
    for (const sibling of el.parentElement.children) {
      if (!plainInline(sibling) && !SKIP.has(sibling.tagName)) return false;
    }
    return true;
  }

  function plainInline(el) {
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

  // The text a view shows, inner markup included; what is hidden or aria-hidden is not shown.
  // `within`: the view's visible part (its document's coordinates); text drawn outside is not shown.
  function deepText(el, within) {
    let text = "";
    for (const child of el.childNodes) {
      if (child.nodeType === 3) text += child.textContent;
      else if (child.nodeType === 1 && child.getAttribute("aria-hidden") !== "true" && !SKIP.has(child.tagName)) {
        const style = getComputedStyle(child);
        const r = child.getBoundingClientRect();
        if (style.display === "none" || style.visibility === "hidden" || parseFloat(style.opacity) === 0) continue;
        if (!intersect([r.left, r.top, r.right, r.bottom], within)) continue;
        const inline = INLINE.has(child.tagName) && shownInline(child);
        text += (inline ? "" : " ") + deepText(child, within) + (inline ? "" : " ");
      }
    }
    return text.replace(/\s+/g, " ").trim();
  }

  function carriesText(nodes) {
    return nodes.some((n) => n.text || n.desc || carriesText(n.children));
  }

  // Views that can be drawn over others: fixed, sticky and absolutely placed ones.
  const overlayCache = new Map();
  function overlays(doc) {
    if (!overlayCache.has(doc)) {
      const found = [];
      for (const el of doc.body.querySelectorAll("*")) {
        const pos = getComputedStyle(el).position;
        if (pos === "fixed" || pos === "sticky" || pos === "absolute") found.push(el);
      }
      overlayCache.set(doc, found);
    }
    return overlayCache.get(doc);
  }

  // The part of `box` (the element's own document's coordinates) that no other view covers, or
  // null when it is hidden. A cover that spans the box across cuts it from that side, as the
  // single rectangle uiautomator reports can show; a cover in the middle leaves it whole.
  function uncovered(el, box) {
    const doc = el.ownerDocument;
    for (const other of overlays(doc)) {
      if (other === el || other.contains(el) || el.contains(other)) continue;
      const r = other.getBoundingClientRect();
      const cover = [r.left, r.top, r.right, r.bottom];
      const both = intersect(box, cover);
      if (!both) continue;
      const top = doc.elementFromPoint((both[0] + both[2]) / 2, (both[1] + both[3]) / 2);
      if (!top || !other.contains(top) || el.contains(top)) continue;  // drawn beneath el
      const acrossX = cover[0] <= box[0] + 0.5 && cover[2] >= box[2] - 0.5;
      const acrossY = cover[1] <= box[1] + 0.5 && cover[3] >= box[3] - 0.5;
      if (acrossX && acrossY) return null;
      box = box.slice();
      if (acrossX && cover[1] <= box[1]) box[1] = Math.max(box[1], cover[3]);
      else if (acrossX && cover[3] >= box[3]) box[3] = Math.min(box[3], cover[1]);
      else if (acrossY && cover[0] <= box[0]) box[0] = Math.max(box[0], cover[2]);
      else if (acrossY && cover[2] >= box[2]) box[2] = Math.min(box[2], cover[0]);
      if (box[2] <= box[0] || box[3] <= box[1]) return null;
    }
    return box;
  }

  function documentScrolls(doc) {
    const root = doc.scrollingElement || doc.documentElement;
    const style = getComputedStyle(doc.body), rootStyle = getComputedStyle(doc.documentElement);
    const hidden = (s) => s.overflowY === "hidden" || s.overflowY === "clip";
    return root.scrollHeight > root.clientHeight + 1 && !hidden(style) && !hidden(rootStyle);
  }

  function union(a, b) {
    return [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];
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
    // A fully transparent view is not visible to the user: Android's accessibility leaves it out.
    if (parseFloat(style.opacity) === 0) return [];
    if (el.dataset && el.dataset.window && el.dataset.window !== "app" && ctx.skipSystem) return [];
    if (el.classList && el.classList.contains("window") && !el.classList.contains("front")) return [];
    const r = el.getBoundingClientRect();
    const box = [r.left + ctx.dx, r.top + ctx.dy, r.right + ctx.dx, r.bottom + ctx.dy];
    let visible = intersect(box, ctx.clip);
    // A page's body is its window's scrolling view: it fills the window however short the page.
    if (el === el.ownerDocument.body && el.ownerDocument !== document) visible = ctx.clip;
    if (visible && el !== el.ownerDocument.body) {
      const local = uncovered(el, [visible[0] - ctx.dx, visible[1] - ctx.dy, visible[2] - ctx.dx, visible[3] - ctx.dy]);
      visible = local && [local[0] + ctx.dx, local[1] + ctx.dy, local[2] + ctx.dx, local[3] + ctx.dy];
    }
    const pkg = (el.dataset && el.dataset.package) || ctx.pkg;

    if (el.dataset && el.dataset.var && visible && parseFloat(style.opacity) > 0) {
      vars.push({package: pkg, name: el.dataset.var, text: el.textContent.trim(), bounds: visible});
    }

    let childClip = ctx.clip;
    const overflowY = style.overflowY, overflowX = style.overflowX;
    const scrollY = (overflowY === "auto" || overflowY === "scroll") && el.scrollHeight > el.clientHeight + 1;
    const scrollX = (overflowX === "auto" || overflowX === "scroll") && el.scrollWidth > el.clientWidth + 1;
    const docScroll = el === el.ownerDocument.body && documentScrolls(el.ownerDocument);
    el.__scrollable = scrollY || scrollX || docScroll;
    el.__scrollableX = scrollX && !scrollY && !docScroll;
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

    const ownTextOrValue = el.tagName === "INPUT" || el.tagName === "TEXTAREA"
      ? (el.type === "password" ? "•".repeat(el.value.length) : el.value) || el.placeholder || ""
      : el.tagName === "SELECT" ? (el.selectedOptions[0] ? el.selectedOptions[0].textContent.trim() : "")
      : (el.tagName === "IMG" ? "" : ownText(el));
    const click = clickable(el, style);
    const isField = el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT";
    const local = [visible[0] - ctx.dx, visible[1] - ctx.dy, visible[2] - ctx.dx, visible[3] - ctx.dy];
    let text = ownTextOrValue;
    let cls = klass(el, style);
    if (TEXT_BEARING.has(cls) && children.length) {
      // A button or text view holds its text itself, as on Android: plain labels inside it are
      // swallowed, not dumped as child text views.
      const plain = children.filter((c) => c.cls === "android.widget.TextView" && !c.clickable && !c.id && !c.children.length);
      if (plain.length) {
        text = deepText(el, local);
        children = children.filter((c) => !plain.includes(c));
      }
    }
    if (!text && !isField && el.tagName !== "IMG" && !carriesText(children) && el !== el.ownerDocument.body) {
      text = deepText(el, local);  // its text sits in markup that is not dumped: the view carries it
      if (text && cls === "android.view.ViewGroup") cls = "android.widget.TextView";
    }
    const meaningful = text || click || isField || el.__scrollable || el.tagName === "IFRAME"
      || el.id || (el.dataset && (el.dataset.testid || el.dataset.window)) || el.getAttribute("aria-label")
      || el.tagName === "IMG" || el === ctx.doc.body;
    if (!meaningful && children.length < 2) return children;

    const type = (el.getAttribute("type") || "").toLowerCase();
    const role = el.getAttribute("role");
    const checkable = type === "checkbox" || type === "radio" || role === "switch" || role === "checkbox";
    const doc = el.ownerDocument;
    return [{
      cls,
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
      // A view holds its children: a container whose fixed child (a floating button) is drawn
      // outside its box is as large as both.
      bounds: click ? visible : children.reduce((b, c) => union(b, c.bounds), visible),
      children,
    }];
  }

  const vw = window.innerWidth, vh = window.innerHeight;
  const screen = [0, 0, vw, vh];
  const ctx = {dx: 0, dy: 0, clip: screen, pkg: "com.android.systemui", doc: document};
  const stage = document.getElementById("stage");
  const front = wpSystem.front;
  const pkg = front.dataset.package;
  const rect = (el) => { const r = el.getBoundingClientRect(); return intersect([r.left, r.top, r.right, r.bottom], screen); };
  const view = (cls, id, bounds, children) => ({cls, text: "", id, desc: "", pkg, checkable: false, checked: false,
    clickable: false, enabled: true, focusable: false, focused: false, scrollable: false, longClickable: false,
    password: false, selected: false, bounds, children});
  // The app's window is the screen (edge to edge): its content between the bars, and the bars'
  // backgrounds drawn by its decor view, as in a real dump. The bars themselves (system UI) and
  // the keyboard (the input method's window) are other windows, which uiautomator leaves out.
  const content = view("android.widget.FrameLayout", "android:id/content", rect(stage), walk(front, {...ctx, pkg}));
  const decor = [content];
  const statusbar = rect(document.getElementById("statusbar"));
  const navbar = rect(document.getElementById("navbar"));
  if (statusbar) decor.push(view("android.view.View", "android:id/statusBarBackground", statusbar, []));
  if (navbar) decor.push(view("android.view.View", "android:id/navigationBarBackground", navbar, []));
  return {windows: [view("android.widget.FrameLayout", "", screen, decor)], vars, stage: stage.getBoundingClientRect().toJSON()};
})()
