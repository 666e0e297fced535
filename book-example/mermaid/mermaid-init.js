// Draws the book's ```mermaid diagrams with the vendored mermaid 11.12.0 (mermaid.min.js, MIT,
// see LICENSE beside it), so that the example shows diagrams with no extra install. The
// preprocessor turns each fence into <pre class="mermaid" data-nb-key="…">; this draws them,
// in mdBook's dark themes with mermaid's dark theme, and marks the page
// <html data-mermaid="drawn"> when every diagram is drawn (tests wait for it).
(() => {
  const html = document.documentElement;
  const dark = ['coal', 'navy', 'ayu'].some((c) => html.classList.contains(c));
  const done = () => { html.dataset.mermaid = 'drawn'; };
  if (typeof mermaid === 'undefined' || !document.querySelector('pre.mermaid')) { done(); return; }
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: dark ? 'dark' : 'default' });
  mermaid.run({ querySelector: 'pre.mermaid' }).then(done, done);
})();
