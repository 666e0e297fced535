/* Paint — the chapter page's data (its own: filled from the islands by load(), read by the
 * other modules through comment(), comments(), islands() …) and what is painted into the text: marks (and the marks of pending comments, found in the text model),
 * block badges on images and diagrams, code-block matches (CSS Custom Highlight API), and
 * which comments are where (idsAt, codeIdsAt, located, isOrphan), and a place flashed for a
 * moment (flash, flashCode). Uses: Locale, Dom, TextModel. */

/* exported Paint */
const Paint = (() => {
  const D = document;
  const { t, tn } = Locale;
  const { anch, arr, cssEscape, displayName, firstMessage, h, num, obj, readJSON, safely, scopeOf,
    statusLabel, statusOf, str, unlean } = Dom;
  const { inUI, mainEl, textModel } = TextModel;

  /* ======================================================== chapter pages */

  // Owned here: the others read it through the functions returned below, and change it only
  // through addComment and replaceComment.
  const state = {
    comments: new Map(), // id -> comment
    order: [], // comments in island order
    islandOf: new Map(), // id -> island element
    summary: null,
    mode: '',
    marks: new Map(), // id -> [mark elements]
    blocks: new Map(), // id -> host element
    code: new Map(), // id -> {code: element, range: Range|null}
    islands: [], // {el, data}
    hasHighlights: !!(window.CSS && CSS.highlights && typeof window.Highlight === 'function')
  };

  function narrow() {
    return !window.matchMedia || window.matchMedia('(max-width: 1023.98px)').matches;
  }

  function located(id) {
    return (state.marks.get(id) || []).length > 0 || state.blocks.has(id) || !!(state.code.get(id) && state.code.get(id).range);
  }
  function isOrphan(c) {
    const scope = scopeOf(c);
    if (scope === 'page') return false;
    if (anch(c).status === 'orphan') return true;
    // Resolved comments are not painted: not an orphan, just not shown in the text. Nor is
    // one the server patched in that the rebuild has not anchored yet.
    if (statusOf(c) === 'resolved' || anch(c).status === 'pending') return false;
    return !located(str(c.id));
  }

  /** Reads the chapter islands into the page's state: their comments in island order (the fields a lean
   * comment leaves out restored), the book-wide summary and the review mode. */
  function load(islands) {
    // The book-wide summary has its own element (one per chapter; print.html has them all):
    // a new comment on one chapter leaves the other chapters' islands as they were.
    const own = obj(readJSON(D.querySelector('script.nb-summary')));
    islands.forEach((el) => {
      const data = obj(readJSON(el));
      state.islands.push({ el, data });
      const sum = data.summary ? obj(data.summary) : own;
      if (typeof sum.open === 'number' || typeof sum.addressed === 'number') state.summary = sum;
      state.mode = str(sum.review || sum.mode || data.review || data.mode || state.mode).toLowerCase();
      arr(data.comments).forEach((c) => {
        if (!c || typeof c !== 'object' || !str(c.id) || state.comments.has(str(c.id))) return;
        unlean(c, data);
        state.comments.set(str(c.id), c);
        state.order.push(c);
        state.islandOf.set(str(c.id), el);
      });
    });
  }

  /* ----- marks */

  function setupMarks() {
    D.querySelectorAll('mark.nb-mark[data-nb-id]').forEach(decorateMark);
  }
  /* A comment's mark may come in pieces (its quote crosses a link, emphasis or code): every
   * piece shows it and opens it; the first alone is a Tab stop, named by all their text. */
  function decorateMark(m) {
    const id = m.getAttribute('data-nb-id');
    if (!state.marks.has(id)) state.marks.set(id, []);
    const pieces = state.marks.get(id);
    pieces.push(m);
    const c = state.comments.get(id);
    if (!c) return;
    if (c.hold === true) m.classList.add('nb-held');
    if (pieces.length > 1) {
      const whole = pieces.map((p) => p.textContent).join('').replace(/\s+/g, ' ').trim();
      pieces[0].setAttribute('aria-label', whole);
      return;
    }
    m.setAttribute('tabindex', '0');
    m.setAttribute('role', 'button');
    m.setAttribute('aria-haspopup', 'dialog');
    // Its name is its visible text (WCAG 2.5.3); who commented and the status describe it.
    m.setAttribute('aria-description', t('markLabel', {
      name: displayName(firstMessage(c).author),
      status: statusLabel(statusOf(c)) + (c.hold === true ? `, ${t('onHold')}` : '')
    }));
  }

  /** Wraps the text of `range` in marks of comment `id` (one per text node, nested where
   * marks overlap); whitespace between blocks is left alone. Returns the marks. */
  function wrapRange(range, id, status) {
    let root = range.commonAncestorContainer;
    if (root.nodeType !== 1) root = root.parentNode;
    const nodes = [];
    const walker = D.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (range.intersectsNode(n) && !inUI(n)) nodes.push(n);
    }
    const marks = [];
    nodes.forEach((node) => {
      const a = node === range.startContainer ? range.startOffset : 0;
      const b = node === range.endContainer ? range.endOffset : node.data.length;
      if (b <= a || !node.data.slice(a, b).trim()) return;
      const middle = a > 0 ? node.splitText(a) : node;
      if (b - a < middle.data.length) middle.splitText(b - a);
      const m = h('mark', { class: 'nb-mark', 'data-nb-id': id, 'data-nb-status': status });
      middle.parentNode.insertBefore(m, middle);
      m.appendChild(middle);
      marks.push(m);
    });
    return marks;
  }

  /**
   * Comments `serve` patched into the island before a rebuild could anchor them
   * (`anchoring.status: "pending"`, with the whole anchor): their quote found in the page's
   * text — where its prefix and suffix fit best — and marked. Found nowhere, they wait for the
   * rebuild.
   */
  function markPending() {
    const main = mainEl();
    if (!main) return;
    let m = null;
    const found = [];
    state.order.forEach((c) => {
      if (anch(c).status !== 'pending' || scopeOf(c) !== 'selection' || statusOf(c) === 'resolved') return;
      if (D.querySelector(`mark.nb-mark[data-nb-id="${cssEscape(str(c.id))}"]`)) return;
      const a = obj(c.anchor);
      const quote = str(a.quote);
      if (!quote.trim()) return;
      // One text model for all: the ranges are wrapped from the last one back, so the text
      // nodes earlier ranges point into stay as they are.
      if (!m) m = textModel(main);
      let best = -1, bestScore = -1;
      for (let at = m.text.indexOf(quote); at >= 0; at = m.text.indexOf(quote, at + 1)) {
        const score = commonSuffix(m.text.slice(Math.max(0, at - 40), at), str(a.prefix)) +
          commonPrefix(m.text.slice(at + quote.length, at + quote.length + 40), str(a.suffix));
        if (score > bestScore) { best = at; bestScore = score; }
      }
      if (best >= 0) found.push({ c, at: best, range: rangeAt(m, best, best + quote.length) });
    });
    found.sort((x, y) => y.at - x.at);
    found.forEach((f) => {
      if (f.range) wrapRange(f.range, str(f.c.id), statusOf(f.c)).forEach(decorateMark);
    });
  }
  function commonSuffix(a, b) {
    let n = 0;
    while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
    return n;
  }
  function commonPrefix(a, b) {
    let n = 0;
    while (n < a.length && n < b.length && a[n] === b[n]) n++;
    return n;
  }
  /** The Range of flat offsets [s, e) of text model `m`. */
  function rangeAt(m, s, e) {
    const find = (pos, end) => {
      let lo = 0, hi = m.nodes.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (m.starts[mid] < pos || (!end && m.starts[mid] === pos)) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    if (!m.nodes.length) return null;
    const i = find(s, false), j = find(e, true);
    const r = D.createRange();
    r.setStart(m.nodes[i], s - m.starts[i]);
    r.setEnd(m.nodes[j], e - m.starts[j]);
    return r;
  }

  function idsAt(target) {
    const ids = [];
    for (let el = target; el && el !== D.body; el = el.parentElement) {
      if (el.matches && el.matches('mark.nb-mark[data-nb-id]')) {
        const id = el.getAttribute('data-nb-id');
        if (state.comments.has(id) && !ids.includes(id)) ids.push(id);
      }
    }
    return ids;
  }

  /* ----- blocks (images, diagrams) */

  function liveIds(list) {
    return list.filter((id) => {
      const c = state.comments.get(id);
      return c && statusOf(c) !== 'resolved';
    });
  }

  function badge(ids, kind) {
    const b = h('button', {
      type: 'button',
      class: 'nb-badge',
      'data-nb-ui': '',
      'data-nb-count': String(ids.length),
      'data-nb-ids': ids.join(' '),
      'aria-haspopup': 'dialog',
      'aria-label': tn('badgeLabel', ids.length, { kind }),
      title: tn('badgeLabel', ids.length, { kind })
    });
    return b;
  }
  function hostStatus(ids) {
    const any = (s) => ids.some((id) => { const c = state.comments.get(id); return c && statusOf(c) === s; });
    return any('open') ? 'open' : (any('addressed') ? 'addressed' : 'open');
  }

  function setupBlocks() {
    D.querySelectorAll('[data-nb-block]').forEach((el) => {
      const ids = liveIds(str(el.getAttribute('data-nb-block')).split(/\s+/).filter(Boolean));
      if (!ids.length) return;
      let host = el;
      const isDiagram = el.tagName === 'PRE' || el.classList.contains('mermaid');
      if (isDiagram) {
        // A wrapper carries the badge: the diagram's own text is its source (and its block key).
        host = h('div', { class: 'nb-block-wrap' });
        el.parentNode.insertBefore(host, el);
        host.appendChild(el);
      }
      host.classList.add('nb-block-has');
      host.setAttribute('data-nb-status', hostStatus(ids));
      if (ids.every((id) => { const c = state.comments.get(id); return c && c.hold === true; })) host.classList.add('nb-held');
      host.appendChild(badge(ids, t(isDiagram ? 'kDiagram' : 'kImage')));
      ids.forEach((id) => { if (!state.blocks.has(id)) state.blocks.set(id, host); });
    });
  }

  /* ----- code anchors (CSS Custom Highlight API) */

  let codeRepaintQueued = false;
  const codeObservers = [];

  function setupCode(islands) {
    D.querySelectorAll('.nb-code-anchor').forEach((a) => {
      const p = a.parentElement;
      if (p && p.tagName === 'P' && !p.textContent.trim() &&
          [...p.children].every((ch) => ch.classList.contains('nb-code-anchor'))) {
        p.classList.add('nb-code-anchor-host');
      }
    });
    const codeComments = state.order.filter((c) => anch(c).code && statusOf(c) !== 'resolved');
    if (!codeComments.length) return;
    // The code blocks of each island's chapter: those before the island and after the previous one.
    const all = [...D.querySelectorAll('main pre:not(.mermaid) > code')];
    const perIsland = new Map();
    islands.forEach((isl, i) => {
      const prev = islands[i - 1];
      perIsland.set(isl, all.filter((code) => {
        const before = isl.compareDocumentPosition(code) & Node.DOCUMENT_POSITION_PRECEDING;
        const afterPrev = !prev || (prev.compareDocumentPosition(code) & Node.DOCUMENT_POSITION_FOLLOWING);
        return before && afterPrev;
      }));
    });
    codeComments.forEach((c) => {
      const id = str(c.id);
      const spec = obj(anch(c).code);
      const codes = perIsland.get(state.islandOf.get(id)) || all;
      const code = codes[num(spec.block, -1)];
      if (!code) return;
      state.code.set(id, { code, spec, range: null });
    });
    paintCode();
    // highlight.js (or anything else) may rebuild the code nodes later: repaint then.
    const seen = new Set();
    state.code.forEach((entry) => {
      if (seen.has(entry.code)) return;
      seen.add(entry.code);
      const pre = entry.code.parentElement;
      if (pre && !pre.querySelector(':scope > .nb-badge')) {
        const ids = [];
        state.code.forEach((e2, id2) => { if (e2.code === entry.code) ids.push(id2); });
        pre.classList.add('nb-code-has');
        pre.appendChild(badge(ids, t('kCode')));
      }
      if (window.MutationObserver) {
        const mo = new MutationObserver(queueCodeRepaint);
        mo.observe(entry.code, { childList: true, subtree: true, characterData: true });
        codeObservers.push(mo);
      }
    });
    window.addEventListener('load', queueCodeRepaint);
  }

  function queueCodeRepaint() {
    if (codeRepaintQueued) return;
    codeRepaintQueued = true;
    (window.requestAnimationFrame || setTimeout)(() => {
      codeRepaintQueued = false;
      safely('code repaint', paintCode);
    });
  }

  /** UTF-16 index in `s` of the code-point offset `cp` (the Rust side counts chars). */
  function unitsFromCp(s, cp) {
    let i = 0;
    for (let n = 0; n < cp && i < s.length; n++) {
      const u = s.charCodeAt(i);
      i += (u >= 0xd800 && u <= 0xdbff && i + 1 < s.length) ? 2 : 1;
    }
    return i;
  }
  function rangeFromUnits(root, start, end) {
    const walker = D.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let pos = 0;
    const range = D.createRange();
    let started = false;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const len = node.data.length;
      if (!started && start <= pos + len) {
        if (start === pos + len && len > 0) { pos += len; continue; }
        range.setStart(node, start - pos);
        started = true;
      }
      if (started && end <= pos + len) {
        range.setEnd(node, end - pos);
        return range;
      }
      pos += len;
    }
    return null;
  }
  function codeRange(code, spec) {
    const full = code.textContent || '';
    const text = str(spec.text);
    if (!text) return null;
    let start = unitsFromCp(full, Math.max(0, num(spec.offset, 0)));
    if (full.substr(start, text.length) !== text) {
      // The offset is stale (or counted differently): take the occurrence nearest to it.
      let best = -1;
      for (let i = full.indexOf(text); i >= 0; i = full.indexOf(text, i + 1)) {
        if (best < 0 || Math.abs(i - start) < Math.abs(best - start)) best = i;
      }
      if (best < 0) return null;
      start = best;
    }
    return rangeFromUnits(code, start, start + text.length);
  }

  function paintCode() {
    const ranges = [];
    const addressed = [];
    state.code.forEach((entry, id) => {
      entry.range = codeRange(entry.code, entry.spec);
      if (!entry.range) return;
      ranges.push(entry.range);
      const c = state.comments.get(id);
      if (c && statusOf(c) === 'addressed') addressed.push(entry.range);
    });
    if (!state.hasHighlights) return;
    CSS.highlights.set('nb-code', new Highlight(...ranges));
    const ha = new Highlight(...addressed);
    ha.priority = 1;
    CSS.highlights.set('nb-code-addressed', ha);
  }

  function codeIdsAt(target, x, y) {
    const code = target.closest && target.closest('pre > code');
    if (!code) return [];
    const ids = [];
    state.code.forEach((entry, id) => {
      if (entry.code !== code || !entry.range) return;
      const rects = entry.range.getClientRects();
      for (let i = 0; i < rects.length; i++) {
        const r = rects[i];
        if (x >= r.left - 4 && x <= r.right + 4 && y >= r.top - 2 && y <= r.bottom + 2) {
          ids.push(id);
          return;
        }
      }
    });
    return ids;
  }

  /* ----- flash: a comment's place drawn to the eye for a moment */

  const flashTimers = new WeakMap();
  function flash(els, ms) {
    els.forEach((el) => {
      if (!el) return;
      el.classList.remove('nb-flash');
      void el.offsetWidth; // restart the animation
      el.classList.add('nb-flash');
      clearTimeout(flashTimers.get(el));
      flashTimers.set(el, setTimeout(() => { el.classList.remove('nb-flash'); }, ms || 2500));
    });
  }
  let codeFlashTimer = 0;
  function flashCode(range, ms) {
    if (!state.hasHighlights || !range) return;
    CSS.highlights.set('nb-code-flash', Object.assign(new Highlight(range), { priority: 2 }));
    clearTimeout(codeFlashTimer);
    codeFlashTimer = setTimeout(() => { CSS.highlights.delete('nb-code-flash'); }, ms || 2500);
  }

  /* ----- what the other modules read (and the two changes they make) */

  /** Whether the browser paints with the CSS Custom Highlight API. */
  const hasHighlights = state.hasHighlights;
  /** The comment with this id, or undefined. */
  const comment = (id) => state.comments.get(id);
  const hasComment = (id) => state.comments.has(id);
  /** The page's comments in island order (a copy). */
  const comments = () => state.order.slice();
  /** The chapter islands read, `{el, data}` in page order (a copy). */
  const islands = () => state.islands.slice();
  /** The island element a comment came from. */
  const islandOf = (id) => state.islandOf.get(id);
  /** The book-wide summary (null when the islands carry none). */
  const summary = () => state.summary;
  /** The review mode (`approve`, … or ''). */
  const reviewMode = () => state.mode;
  /** The marks painted for a comment, in text order (a copy). */
  const marksOf = (id) => (state.marks.get(id) || []).slice();
  /** The element that carries a comment's block badge, or undefined. */
  const blockHostOf = (id) => state.blocks.get(id);
  /** A code comment's block and its range: `{code, range}`, or undefined. */
  const codeOf = (id) => {
    const e = state.code.get(id);
    return e ? { code: e.code, range: e.range } : undefined;
  };
  const hasCodeComments = () => state.code.size > 0;

  /** Adds a comment the API has just created (kept with the page's first island); false when
   * the page has it already. */
  function addComment(c) {
    const id = str(c.id);
    if (!id || state.comments.has(id)) return false;
    state.comments.set(id, c);
    state.order.push(c);
    if (state.islands[0]) state.islandOf.set(id, state.islands[0].el);
    return true;
  }
  /** Puts the server's copy of a comment the page has in place of the old one (keeping where
   * the build anchored it when the copy does not say). */
  function replaceComment(c) {
    const id = str(c.id);
    const old = state.comments.get(id);
    if (!old) return;
    if (old.anchoring && !c.anchoring) c.anchoring = old.anchoring;
    const i = state.order.indexOf(old);
    if (i >= 0) state.order[i] = c;
    state.comments.set(id, c);
  }

  return { addComment, blockHostOf, codeIdsAt, codeOf, comment, comments, decorateMark, flash, flashCode,
    hasCodeComments, hasComment, hasHighlights, idsAt, isOrphan, islandOf, islands, load, located, markPending,
    marksOf, narrow, replaceComment, reviewMode, setupBlocks, setupCode, setupMarks, summary, wrapRange };
})();
