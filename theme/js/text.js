/* TextModel — the page's reader text as the build anchors in it: the text nodes of `main`
 * in document order, without what is not reader text (scripts and styles, the client's own UI,
 * diagram sources, mdBook's code-block buttons and playground output), and the text-quote
 * anchor {quote, prefix, suffix, section} of a selection, captured from it. Paint finds
 * pending comments in it; Compose captures new ones. Uses no other namespace. */

/* exported TextModel */
const TextModel = (() => {
  const D = document;

  function mainEl() {
    return D.querySelector('main');
  }
  function inUI(node) {
    const el = node && (node.nodeType === 1 ? node : node.parentElement);
    return !!(el && el.closest('[data-nb-ui]'));
  }
  /** Elements whose text is not reader text (skipped with their whole subtree). */
  function skipped(el) {
    const tag = el.localName;
    if (tag === 'script' || tag === 'style') return true;
    if (el.hasAttribute('data-nb-ui')) return true;
    const cl = el.classList;
    if (cl.contains('mermaid') && (tag === 'pre' || el.hasAttribute('data-nb-src') || el.hasAttribute('data-processed'))) return true;
    // mdBook's own code-block buttons and playground output.
    if (tag === 'div' && cl.contains('buttons') && el.parentElement && el.parentElement.localName === 'pre') return true;
    if (tag === 'code' && cl.contains('result')) return true;
    return false;
  }
  /** The flat text of `root`: every reader Text node's value, in document order. */
  function textModel(root) {
    const nodes = [];
    const starts = [];
    const parts = [];
    const index = new Map();
    let pos = 0;
    const walker = D.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode(n) {
        if (n.nodeType === 3) return NodeFilter.FILTER_ACCEPT;
        return skipped(n) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
      }
    });
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      index.set(n, nodes.length);
      nodes.push(n);
      starts.push(pos);
      parts.push(n.nodeValue);
      pos += n.nodeValue.length;
    }
    return { nodes, starts, index, text: parts.join('') };
  }
  /** The flat offset of a boundary point: the length of the reader text before it. */
  function flatOffset(m, container, offset) {
    if (container.nodeType === 3 && m.index.has(container)) {
      const i = m.index.get(container);
      return m.starts[i] + Math.max(0, Math.min(offset, container.nodeValue.length));
    }
    // An element boundary (or a point in skipped text): count the reader text nodes before it.
    const probe = D.createRange();
    probe.setStart(container, offset);
    probe.collapse(true);
    let lo = 0;
    let hi = m.nodes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (probe.comparePoint(m.nodes[mid], 0) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return 0;
    return m.starts[lo - 1] + m.nodes[lo - 1].nodeValue.length;
  }
  function isLowSurrogate(u) {
    return u >= 0xdc00 && u <= 0xdfff;
  }
  /** The section of a point: the trimmed text of the last h1–h4 of `main` that starts before it. */
  function sectionAt(main, container, offset) {
    const probe = D.createRange();
    probe.setStart(container, offset);
    probe.collapse(true);
    let last = null;
    const hs = main.querySelectorAll('h1, h2, h3, h4');
    for (let i = 0; i < hs.length; i++) {
      if (inUI(hs[i])) continue;
      if (probe.comparePoint(hs[i], 0) <= 0) last = hs[i];
      else break;
    }
    return last ? last.textContent.trim() : null;
  }

  /**
   * The text-quote anchor of a Range, captured from the text model the build anchors against:
   * {quote, prefix, suffix, section}; null for a range outside `main`, or without reader text
   * (a range inside the client's own UI has none: its text is not in the model). A boundary in
   * skipped content counts as the edge of that content, so a range that runs into the client UI
   * (a triple click on the last paragraph ends at the page discussion) keeps its reader text.
   * Prefix and suffix are 40 UTF-16 units (39 rather than split a surrogate pair).
   */
  function captureAnchor(range) {
    const main = mainEl();
    if (!main || !range || typeof range.startContainer === 'undefined') return null;
    if (!main.contains(range.startContainer) || !main.contains(range.endContainer)) return null;
    const m = textModel(main);
    const text = m.text;
    let s = flatOffset(m, range.startContainer, range.startOffset);
    let e = flatOffset(m, range.endContainer, range.endOffset);
    if (e < s) { const x = s; s = e; e = x; }
    if (s > 0 && isLowSurrogate(text.charCodeAt(s))) s--;
    if (e < text.length && isLowSurrogate(text.charCodeAt(e))) e++;
    const quote = text.slice(s, e);
    if (!quote.trim()) return null;
    let ps = Math.max(0, s - 40);
    if (ps > 0 && isLowSurrogate(text.charCodeAt(ps))) ps++;
    let se = Math.min(text.length, e + 40);
    if (se < text.length && isLowSurrogate(text.charCodeAt(se))) se--;
    return {
      quote,
      prefix: text.slice(ps, s),
      suffix: text.slice(e, se),
      section: sectionAt(main, range.startContainer, range.startOffset)
    };
  }

  return { captureAnchor, inUI, mainEl, textModel };
})();
