// HLO Lens: the small mounts around the graph.
//   * command and card (data.mode "command" / "card"): handed to the graph view's module
//     (graph_view.js), which holds the graph, the selection and the cards; until it has
//     loaded, a mount waits in a queue it empties when it does;
//   * link (data.mode "link"): the address of the view on screen with a copy button. It
//     shows the page's own URL, which Python writes on every change of the view, so it is
//     right even after a click that reran only part of the page;
//   * remember (data.mode "remember"): writes the cookie of this browser's dumps;
//   * preload (data.mode "preload"): nothing; mounted first so that the page fetches the
//     components' code early.
function linkBox(component) {
  const { parentElement } = component;
  let box = parentElement.querySelector(".hl-link");
  if (!box) {
    box = document.createElement("div");
    box.className = "hl-link";
    const text = document.createElement("code");
    const copy = document.createElement("button");
    copy.type = "button";
    copy.textContent = "Copy";
    copy.title = "Copy the link";
    copy.addEventListener("click", () => {
      const value = text.textContent;
      const done = () => { copy.textContent = "Copied"; setTimeout(() => { copy.textContent = "Copy"; }, 1500); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(value).then(done, () => {});
        return;
      }
      // plain http on another host: no clipboard API, the old way still works
      const area = document.createElement("textarea");
      area.value = value;
      box.appendChild(area);
      area.select();
      try { document.execCommand("copy"); done(); } finally { area.remove(); }
    });
    box.append(text, copy);
    parentElement.appendChild(box);
    const update = () => { if (text.textContent !== location.href) text.textContent = location.href; };
    update();
    box.timer = setInterval(update, 250);
  }
  return () => { clearInterval(box.timer); box.remove(); };
}

// remember (data.mode "remember"): the share ids of the dumps this browser uploaded or
// opened, kept in a first-party cookie the server reads at the next page load (the
// Stored list shows a visitor their own dumps, not everyone's)
function remember(data) {
  const value = (data.ids || []).filter(id => /^[A-Za-z0-9_-]{8,64}$/.test(id)).join(".");
  document.cookie = `${data.cookie}=${value}; path=/; max-age=31536000; SameSite=Lax`;
  return () => {};
}

export default function graphPart(component) {
  if (component.data && component.data.mode === "link") return linkBox(component);
  if (component.data && component.data.mode === "remember") return remember(component.data);
  if (component.data && component.data.mode === "preload") return () => {};   // fetched, that is all
  const api = globalThis.hlolensGraphView;
  if (api) return api.mount(component);
  const entry = { component, cleanup: null, dead: false };
  (globalThis.hlolensWaiting ||= []).push(entry);
  return () => {
    entry.dead = true;
    if (entry.cleanup) entry.cleanup();
  };
}
