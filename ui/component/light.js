// HLO Lens: the graph's command and card mounts, handed to the graph view's module
// (graph_view.js), which holds the graph, the selection and the cards; until it has
// loaded, a mount waits in a queue it empties when it does.
export default function graphPart(component) {
  const api = globalThis.hlolensGraphView;
  if (api) return api.mount(component);
  const entry = { component, cleanup: null, dead: false };
  (globalThis.hlolensWaiting ||= []).push(entry);
  return () => {
    entry.dead = true;
    if (entry.cleanup) entry.cleanup();
  };
}
