// HLO Lens graph view: an SVG laid out by Graphviz on the server, with pan, zoom and clicks.
//
// Three mounts share this module. The graph is a component of its own whose JS is this
// file; the command and the card are mounts of a second, tiny component (light.js) that
// hands them to this module through `globalThis.hlolensGraphView`, so the ~20 KB of this
// file travels with the graph (sent once per layout) and not with every click's command
// and card:
//   * the graph   data = {svg, svg_id, channel, height, cards}: byte-identical across reruns,
//                 so Streamlit sends only a hash when nothing about the layout changed;
//                 `cards` (JSON text) holds the inspector header of every drawn node;
//   * a card      data = {mode: "card", channel, selected, card}: the inspector's header in
//                 the inspector column. A click fills it from the graph's cards at once,
//                 before Python hears of the click; Python's card (the whole HLO line)
//                 replaces it when its rerun arrives;
//   * a command   data = {mode: "command", channel, svg_id, selected, viewport, center, nonce}:
//                 a few bytes from Python (selection highlight, viewport to restore, a node to
//                 centre on) that find the graph through `channel`.
// To Python the graph reports `click` {id, dbl, seq} and `viewport` {value, seq} state values;
// `seq` makes every event distinct. Python alone writes the URL.
//
// Pan: a CSS transform while the pointer moves (cheap at thousands of nodes), then the SVG
// viewBox is settled once. Wheel zoom works the same way, settled after the wheel stops.

const graphs = new Map();     // channel -> Graph
const pending = new Map();    // channel -> last command for it
const cardViews = new Map();  // channel -> Card
const instances = new WeakMap();  // parentElement -> Graph
let seqCounter = 0;

const nextSeq = () => `${Date.now().toString(36)}.${(seqCounter++).toString(36)}`;
const SETTLE_MS = 180;        // wheel idle time before the viewBox is settled
const REPORT_MS = 350;        // debounce of viewport reports to Python
const DRAG_PX = 4;            // movement that turns a press into a drag
const READABLE = 1.6;         // SVG units per pixel beyond which 9 pt labels are unreadable
const CLOSE = 1.0;            // the scale used to show a node up close
const READ_UNITS = 0.9;       // SVG units per pixel a view opens at: 9 pt labels at 10 px
const MINI_PX = 180;          // the minimap's longer side
const HINT_MS = 1400;         // how long the wheel hint stays after a plain wheel
// The wheel over the graph scrolls the page, as over a map widget; Ctrl/⌘ + wheel (a
// trackpad's pinch sends ctrlKey) or the wheel over the focused graph zooms.
const WHEEL_HINT = "Ctrl + scroll to zoom (⌘ + scroll on a Mac), or click the graph first";

function parseBox(text) {
  if (!text) return null;
  const v = String(text).split(/[\s,]+/).map(Number);
  if (v.length !== 4 || v.some((x) => !Number.isFinite(x)) || v[2] <= 0 || v[3] <= 0) return null;
  return { x: v[0], y: v[1], w: v[2], h: v[3] };
}

// The SVG id of a selection: an instruction name, or a group id (which holds a ':').
const elementFor = (selected) => (selected.includes(":") ? `group:${selected}` : `node:${selected}`);

// v kept within [lo, hi]; centred between them when the range is empty (hi < lo)
const within = (v, lo, hi) => (hi < lo ? (lo + hi) / 2 : Math.min(Math.max(v, lo), hi));

const boxText = (b) => [b.x, b.y, b.w, b.h].map((v) => (Math.round(v * 10) / 10).toString()).join(",");

// The element a click landed on: walk up from the innermost target to a node or group.
function targetId(event, root) {
  const path = event.composedPath();
  for (const el of path) {
    if (el === root) break;
    const id = el && el.id;
    if (typeof id === "string" && (id.startsWith("node:") || id.startsWith("group:"))) return id;
  }
  return null;
}

class Graph {
  constructor(parent) {
    this.parent = parent;
    this.root = document.createElement("div");
    this.root.className = "hl-root";
    this.root.innerHTML =
      '<div class="hl-stage"></div>' +
      '<div class="hl-tools">' +
      '<button type="button" data-act="in" title="Zoom in">+</button>' +
      '<button type="button" data-act="out" title="Zoom out">&minus;</button>' +
      '<button type="button" data-act="fit" title="Fit the whole graph">fit</button>' +
      "</div>" +
      '<div class="hl-hint" aria-live="polite">' + WHEEL_HINT + "</div>" +
      '<div class="hl-mini" hidden title="The whole graph: click to go there">' +
      '<img alt=""><div class="hl-mini-view"></div></div>';
    parent.appendChild(this.root);
    this.stage = this.root.querySelector(".hl-stage");
    this.stage.tabIndex = 0;   // focused (by a click or Tab), the wheel zooms
    this.stage.title = WHEEL_HINT;
    this.hint = this.root.querySelector(".hl-hint");
    this.mini = this.root.querySelector(".hl-mini");
    this.miniImg = this.mini.querySelector("img");
    this.miniView = this.mini.querySelector(".hl-mini-view");
    this.miniUrl = "";
    this.svgText = "";
    this.onMiniDown = this.onMiniDown.bind(this);
    this.mini.addEventListener("pointerdown", this.onMiniDown);
    this.hintTimer = 0;
    this.svg = null;
    this.svgId = null;
    this.full = null;          // the graph's own bounds (Graphviz's viewBox)
    this.vb = null;            // current viewBox, always with the stage's aspect ratio
    this.t = { s: 1, x: 0, y: 0 };  // CSS transform while interacting
    this.drag = null;
    this.settleTimer = 0;
    this.reportTimer = 0;
    this.reported = [];        // viewports we sent (Python echoes them back)
    this.fresh = false;        // an SVG arrived and no command has placed it yet
    this.lastNonce = null;
    this.lastViewport = null;
    this.selected = "";
    this.setStateValue = () => {};
    this.channel = "";

    this.onPointerDown = this.onPointerDown.bind(this);
    this.onPointerMove = this.onPointerMove.bind(this);
    this.onPointerUp = this.onPointerUp.bind(this);
    this.onWheel = this.onWheel.bind(this);
    this.onClick = this.onClick.bind(this);
    this.onDblClick = this.onDblClick.bind(this);
    this.onTool = this.onTool.bind(this);
    this.stage.addEventListener("pointerdown", this.onPointerDown);
    this.stage.addEventListener("pointermove", this.onPointerMove);
    this.stage.addEventListener("pointerup", this.onPointerUp);
    this.stage.addEventListener("pointercancel", this.onPointerUp);
    this.stage.addEventListener("wheel", this.onWheel, { passive: false });
    this.stage.addEventListener("click", this.onClick);
    this.stage.addEventListener("dblclick", this.onDblClick);
    this.root.querySelector(".hl-tools").addEventListener("click", this.onTool);
    this.resizeObserver = new ResizeObserver(() => this.onResize());
    this.resizeObserver.observe(this.stage);
  }

  destroy() {
    this.resizeObserver.disconnect();
    clearTimeout(this.clickTimer);
    clearTimeout(this.settleTimer);
    clearTimeout(this.reportTimer);
    clearTimeout(this.hintTimer);
    if (this.miniUrl) URL.revokeObjectURL(this.miniUrl);
    if (graphs.get(this.channel) === this) graphs.delete(this.channel);
    this.root.remove();
  }

  update(data, setStateValue) {
    this.setStateValue = setStateValue;
    if (data.height) this.root.style.height = `${data.height}px`;
    if (this.channel !== data.channel) {
      if (graphs.get(this.channel) === this) graphs.delete(this.channel);
      this.channel = data.channel;
    }
    graphs.set(this.channel, this);
    if (data.svg_id !== this.svgId) {
      this.load(data.svg, data.svg_id);
      try { this.cards = data.cards ? JSON.parse(data.cards) : {}; } catch (_) { this.cards = {}; }
    }
    const cmd = pending.get(this.channel);
    if (cmd) this.command(cmd);
  }

  // ---------------------------------------------------------------- SVG and viewBox
  load(svgText, svgId) {
    const start = svgText.indexOf("<svg");
    this.svgText = start >= 0 ? svgText.slice(start) : svgText;
    this.stage.innerHTML = this.svgText;
    this.svg = this.stage.querySelector("svg");
    if (this.miniUrl) URL.revokeObjectURL(this.miniUrl);
    this.miniUrl = "";
    this.mini.hidden = true;
    this.svgId = svgId;
    this.root.dataset.svgId = svgId;
    this.t = { s: 1, x: 0, y: 0 };
    if (!this.svg) return;
    this.full = parseBox(this.svg.getAttribute("viewBox")) ||
      { x: 0, y: 0, w: 100, h: 100 };
    this.root.dataset.full = boxText(this.full);
    this.svg.removeAttribute("width");
    this.svg.removeAttribute("height");
    this.svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    this.svg.style.transformOrigin = "0 0";
    this.fresh = true;
    this.selected = "";
    this.fit(false);
  }

  size() {
    const r = this.stage.getBoundingClientRect();
    return { w: Math.max(r.width, 1), h: Math.max(r.height, 1) };
  }

  // Grow a box to the stage's aspect ratio around its centre (so 1 unit = same px both ways).
  aspect(b) {
    const { w, h } = this.size();
    const unit = Math.max(b.w / w, b.h / h);
    const nw = unit * w, nh = unit * h;
    return { x: b.x - (nw - b.w) / 2, y: b.y - (nh - b.h) / 2, w: nw, h: nh };
  }

  setBox(b, report = true) {
    if (!this.svg) return;
    this.vb = this.aspect(b);
    this.t = { s: 1, x: 0, y: 0 };
    this.svg.style.transform = "";
    this.svg.style.willChange = "";
    this.svg.setAttribute("viewBox", boxText(this.vb));
    this.root.dataset.viewport = boxText(this.vb);
    this.showMinimap(this.vb);
    if (report) this.scheduleReport();
  }

  // The whole graph, its top at the frame's top: a graph wider than the frame's shape
  // leaves its spare height below it, not above.
  fit(report = true) {
    if (!this.full) return;
    const pad = Math.max(this.full.w, this.full.h) * 0.01;
    const b = this.aspect({ x: this.full.x - pad, y: this.full.y - pad,
                            w: this.full.w + 2 * pad, h: this.full.h + 2 * pad });
    this.setBox({ ...b, y: this.full.y - pad }, report);
  }

  unitsPerPx() { return this.vb ? this.vb.w / this.size().w : 1; }

  // Nothing places the view (no viewport, selection or node to centre on): the whole
  // graph when its labels are readable so, else a readable part around ``home`` (the
  // biggest fusion, from Python), kept inside the graph: no empty margin above or beside
  // it. The minimap shows where that part is.
  openHome(home) {
    if (!this.full || this.unitsPerPx() <= READ_UNITS) return;
    const { w, h } = this.size();
    const bw = w * READ_UNITS, bh = h * READ_UNITS;
    const c = home ? this.boundsOf(home) : null;
    const cx = c ? (c.x0 + c.x1) / 2 : this.full.x + this.full.w / 2;
    const cy = c ? (c.y0 + c.y1) / 2 : this.full.y;
    const f = this.full;
    this.setBox({ x: within(cx - bw / 2, f.x, f.x + f.w - bw),
                  y: bh >= f.h ? f.y : within(cy - bh / 2, f.y, f.y + f.h - bh),   // top
                  w: bw, h: bh }, false);
  }

  // ---------------------------------------------------------------- minimap
  // The whole graph, small, in a corner while the view shows only part of it, with the
  // part shown drawn on it. The image is the same SVG, made once per graph, after the
  // graph itself is drawn (an image decodes off the page's DOM).
  showMinimap(b) {
    const f = this.full;
    const whole = !f || (b.x <= f.x && b.y <= f.y && b.x + b.w >= f.x + f.w &&
                         b.y + b.h >= f.y + f.h);
    this.mini.hidden = whole;
    if (whole) return;
    const k = MINI_PX / Math.max(f.w, f.h);
    if (!this.miniUrl) {
      this.miniUrl = URL.createObjectURL(new Blob([this.svgText], { type: "image/svg+xml" }));
      this.mini.style.width = `${f.w * k}px`;
      this.mini.style.height = `${f.h * k}px`;
      const url = this.miniUrl;
      setTimeout(() => { if (this.miniUrl === url) this.miniImg.src = url; }, 250);
    }
    const v = this.miniView.style;
    v.left = `${(b.x - f.x) * k}px`;
    v.top = `${(b.y - f.y) * k}px`;
    v.width = `${b.w * k}px`;
    v.height = `${b.h * k}px`;
  }

  onMiniDown(e) {
    if (e.button !== 0 || !this.vb || !this.full) return;
    e.preventDefault();
    e.stopPropagation();
    this.settle();
    const r = this.mini.getBoundingClientRect();
    const k = MINI_PX / Math.max(this.full.w, this.full.h);
    const gx = this.full.x + (e.clientX - r.left) / k, gy = this.full.y + (e.clientY - r.top) / k;
    this.setBox({ x: gx - this.vb.w / 2, y: gy - this.vb.h / 2, w: this.vb.w, h: this.vb.h });
  }

  // The viewBox the screen shows now, a CSS transform of a pan or zoom included.
  currentBox() {
    const u = this.unitsPerPx();
    const { w, h } = this.size();
    const nu = u / this.t.s;
    return { x: this.vb.x - this.t.x * nu, y: this.vb.y - this.t.y * nu, w: w * nu, h: h * nu };
  }

  // Limit zoom: from 20 px per unit to twice the fitted view.
  clampUnits(units) {
    const fitUnits = this.full ? this.aspect(this.full).w / this.size().w : units;
    return Math.min(Math.max(units, 0.05), Math.max(fitUnits * 2, 0.05));
  }

  // Settle the CSS transform into the viewBox.
  settle() {
    clearTimeout(this.settleTimer);
    this.settleTimer = 0;
    if (!this.vb || (this.t.s === 1 && this.t.x === 0 && this.t.y === 0)) return;
    this.setBox(this.currentBox());
  }

  applyTransform() {
    this.svg.style.willChange = "transform";
    this.svg.style.transform = `translate(${this.t.x}px, ${this.t.y}px) scale(${this.t.s})`;
    this.showMinimap(this.currentBox());
  }

  zoomAt(px, py, factor) {
    if (!this.vb) return;
    const u = this.unitsPerPx() / this.t.s;
    const target = this.clampUnits(u / factor);
    const k = u / target;
    this.t = { s: this.t.s * k, x: px - k * (px - this.t.x), y: py - k * (py - this.t.y) };
    this.applyTransform();
  }

  scheduleReport() {
    clearTimeout(this.reportTimer);
    this.reportTimer = setTimeout(() => {
      if (!this.vb) return;
      const value = boxText(this.vb);
      this.reported.push(value);
      if (this.reported.length > 40) this.reported.shift();
      this.setStateValue("viewport", { value, seq: nextSeq() });
    }, REPORT_MS);
  }

  // Centre an element; zoom out to fit it, or in so a node is readable.
  // An element's box in the SVG's user units (its transforms applied), or null.
  boundsOf(elementId) {
    const el = this.svg && this.svg.getElementById(elementId);
    if (!el) return null;
    const bb = el.getBBox();
    const m = el.getCTM && this.svg.getCTM
      ? this.svg.getCTM().inverse().multiply(el.getCTM()) : null;
    let x0 = bb.x, y0 = bb.y, x1 = bb.x + bb.width, y1 = bb.y + bb.height;
    if (m) {
      const a = new DOMPoint(x0, y0).matrixTransform(m);
      const b = new DOMPoint(x1, y1).matrixTransform(m);
      x0 = Math.min(a.x, b.x); y0 = Math.min(a.y, b.y);
      x1 = Math.max(a.x, b.x); y1 = Math.max(a.y, b.y);
    }
    return { x0, y0, x1, y1 };
  }

  centerOn(elementId, readable) {
    const c = this.vb ? this.boundsOf(elementId) : null;
    if (!c) return false;
    const { x0, y0, x1, y1 } = c;
    const { w, h } = this.size();
    let u = this.unitsPerPx();
    const need = Math.max((x1 - x0) / (w * 0.9), (y1 - y0) / (h * 0.9));
    if (need > u) u = need;
    else if (readable && u > READABLE) u = Math.max(CLOSE, need);
    u = this.clampUnits(u);
    const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
    this.setBox({ x: cx - (w * u) / 2, y: cy - (h * u) / 2, w: w * u, h: h * u });
    return true;
  }

  highlight(selected) {
    if (!this.svg) return;
    for (const el of this.svg.querySelectorAll(".hl-selected")) el.classList.remove("hl-selected");
    this.selected = selected || "";
    if (!selected) return;
    const el = this.svg.getElementById(elementFor(selected)) ||
      this.svg.getElementById(`group:fusion:${selected}`);   // an open fusion: its box
    if (el) el.classList.add("hl-selected");
  }

  // ---------------------------------------------------------------- commands from Python
  command(cmd) {
    if (cmd.selected === this.unconfirmed) this.unconfirmed = null;
    if (!this.svg || cmd.svg_id !== this.svgId) return;   // for an SVG still on its way
    this.highlight(cmd.selected);
    const vp = cmd.viewport || "";
    if (this.fresh) {
      this.fresh = false;
      const box = parseBox(vp);
      const sel = cmd.selected ? elementFor(cmd.selected) : "";
      if (cmd.center && this.centerOn(cmd.center, true)) { /* centred */ }
      else if (box) this.setBox(box, false);
      else if (!(sel && this.centerOn(sel, true))) this.openHome(cmd.home || "");
    } else if (cmd.center && cmd.nonce !== this.lastNonce) {
      this.centerOn(cmd.center, true);
    } else if (vp && vp !== this.lastViewport && !this.reported.includes(vp)) {
      const box = parseBox(vp);
      if (box) this.setBox(box, false);
    }
    this.lastNonce = cmd.nonce;
    this.lastViewport = vp;
  }

  // ---------------------------------------------------------------- pointer and wheel
  onPointerDown(e) {
    if (e.button !== 0 || !this.svg) return;
    this.settle();
    this.drag = { id: e.pointerId, x: e.clientX, y: e.clientY, tx: this.t.x, ty: this.t.y, moved: false };
  }

  onPointerMove(e) {
    const d = this.drag;
    if (!d || d.id !== e.pointerId) return;
    const dx = e.clientX - d.x, dy = e.clientY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < DRAG_PX) return;
    if (!d.moved) {
      d.moved = true;
      this.stage.setPointerCapture(e.pointerId);
      this.root.classList.add("hl-dragging");
    }
    this.t = { s: this.t.s, x: d.tx + dx, y: d.ty + dy };
    this.applyTransform();
  }

  onPointerUp(e) {
    const d = this.drag;
    if (!d || d.id !== e.pointerId) return;
    this.drag = null;
    if (d.moved) {
      this.suppressClick = true;
      this.root.classList.remove("hl-dragging");
      try { this.stage.releasePointerCapture(e.pointerId); } catch (_) { /* released */ }
      this.settle();
    }
  }

  onWheel(e) {
    if (!this.svg) return;
    const focused = this.root.getRootNode().activeElement === this.stage;
    if (!(e.ctrlKey || e.metaKey || focused)) {     // the page scrolls; say how to zoom
      this.root.classList.add("hl-hinting");
      clearTimeout(this.hintTimer);
      this.hintTimer = setTimeout(() => this.root.classList.remove("hl-hinting"), HINT_MS);
      return;
    }
    e.preventDefault();
    const r = this.stage.getBoundingClientRect();
    const lines = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? r.height : 1;
    const factor = Math.exp(-e.deltaY * lines * 0.0015);
    this.zoomAt(e.clientX - r.left, e.clientY - r.top, factor);
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.settle(), SETTLE_MS);
  }

  onClick(e) {
    if (this.suppressClick) { this.suppressClick = false; return; }
    const id = targetId(e, this.stage);
    if (!id) return;
    const name = id.startsWith("node:") ? id.slice(5) : id.slice(6);
    this.highlight(name);
    const card = cardViews.get(this.channel);
    if (card) card.preview(name, (this.cards || {})[name] || null);
    this.sendClick(id, name, 0);
  }

  // A click sent while a run is being replaced can be lost on the way (seen about once
  // in twenty in the browser tests); until a command from Python shows the selection,
  // it is sent again, twice at most. Selecting is idempotent, so a repeat is harmless.
  sendClick(id, name, tries) {
    clearTimeout(this.clickTimer);
    this.unconfirmed = name;
    this.setStateValue("click", { id, dbl: false, seq: nextSeq() });
    if (tries < 2) {
      this.clickTimer = setTimeout(() => {
        if (this.unconfirmed === name) this.sendClick(id, name, tries + 1);
      }, 1500);
    }
  }

  onDblClick(e) {
    const id = targetId(e, this.stage);
    if (!id) return;
    this.unconfirmed = null;          // the double-click supersedes its two clicks
    clearTimeout(this.clickTimer);
    e.preventDefault();
    this.setStateValue("click", { id, dbl: true, seq: nextSeq() });
  }

  onTool(e) {
    const act = e.target && e.target.dataset && e.target.dataset.act;
    if (!act || !this.vb) return;
    this.settle();
    if (act === "fit") { this.fit(); return; }
    const { w, h } = this.size();
    this.zoomAt(w / 2, h / 2, act === "in" ? 1.5 : 1 / 1.5);
    this.settle();
  }

  onResize() {
    if (!this.vb) return;
    this.settle();
    this.setBox(this.vb, false);
  }
}


// ---------------------------------------------------------------- the inspector's header
// Built with textContent only: every value is the module's text, never markup.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

class Card {
  constructor(parent) {
    this.root = el("div", "hl-card");
    this.root.hidden = true;
    this.shownFor = "";
    this.waitingFor = "";     // a click previewed here, not yet answered by Python
    this.waitSince = 0;
    parent.appendChild(this.root);
  }

  destroy() {
    if (cardViews.get(this.channel) === this) cardViews.delete(this.channel);
    this.root.remove();
  }

  update(data) {
    this.channel = data.channel;
    cardViews.set(this.channel, this);
    const sel = data.selected || "";
    // an answer to an older click must not replace the card of a newer one
    if (this.waitingFor && sel !== this.waitingFor && Date.now() - this.waitSince < 5000) return;
    this.waitingFor = "";
    this.render(data.card || null, sel);
  }

  preview(name, card) {
    this.waitingFor = name;
    this.waitSince = Date.now();
    this.render(card, name);
  }

  render(c, name) {
    this.shownFor = name;
    this.root.dataset.name = name;
    this.root.replaceChildren();
    if (!c) { this.root.hidden = true; return; }
    this.root.hidden = false;
    this.root.appendChild(el("div", "hl-card-name", c.name));
    const meta = el("div", "hl-card-meta");
    meta.appendChild(el("code", "", c.opcode));
    if (c.kind) { meta.append(" · "); meta.appendChild(el("code", "", c.kind)); }
    if (c.root) meta.append(" · ROOT");
    meta.append(" · in ");
    meta.appendChild(el("code", "", c.computation));
    meta.append(` · line ${c.line}`);
    this.root.appendChild(meta);
    this.root.appendChild(el("pre", "hl-card-text", c.text));
    const rows = el("ul", "hl-card-rows");
    const row = (label, value, asCode) => {
      const li = el("li");
      li.appendChild(el("b", "", label));
      li.append(": ");
      if (Array.isArray(value)) {
        value.forEach((v, i) => { if (i) li.append(" "); li.appendChild(el("code", "", v)); });
      } else if (asCode && value) li.appendChild(el("code", "", value));
      else li.append(value || "—");
      rows.appendChild(li);
      return li;
    };
    row("Shape", c.shape, true);
    row("Bytes", c.bytes, false);
    if (c.layouts && c.layouts.length) {
      const li = row("Layout", c.layouts, true);
      if (c.more_layouts) li.append(" …");
    }
    row("op_name", c.op_name, true);
    row("Source", c.source, true);
    if (c.layout_change) row("Layout change", `⟲ ${c.layout_change}`, false);
    this.root.appendChild(rows);
  }
}

const cardInstances = new WeakMap();  // parentElement -> Card

export default function graphView(component) {
  const { data, parentElement, setStateValue } = component;
  if (!data || typeof data !== "object") return undefined;
  if (data.mode === "command") {
    const prev = pending.get(data.channel);
    // a centre request survives a newer command that carries none until it was applied
    const cmd = (!data.center && prev && prev.center && prev.svg_id === data.svg_id)
      ? { ...data, center: prev.center, nonce: prev.nonce } : data;
    pending.set(data.channel, cmd);
    const graph = graphs.get(data.channel);
    if (graph) graph.command(cmd);
    return undefined;
  }
  if (data.mode === "card") {
    let card = cardInstances.get(parentElement);
    if (!card) {
      card = new Card(parentElement);
      cardInstances.set(parentElement, card);
    }
    card.update(data);
    return () => {
      cardInstances.delete(parentElement);
      card.destroy();
    };
  }
  let graph = instances.get(parentElement);
  if (!graph) {
    graph = new Graph(parentElement);
    instances.set(parentElement, graph);
  }
  graph.update(data, setStateValue);
  return () => {
    instances.delete(parentElement);
    graph.destroy();
  };
}

// The light component's mounts (command, card) come here; those that arrived before this
// module was loaded wait in `globalThis.hlolensWaiting`.
const api = { mount: (component) => graphView(component) };
globalThis.hlolensGraphView = api;
for (const entry of (globalThis.hlolensWaiting || []).splice(0)) {
  if (!entry.dead) entry.cleanup = api.mount(entry.component) || null;
}
