/* Writing a comment: the text model a selection is captured from (the same one the build
 * anchors in), selection -> "Comment", and the composer popover. Uses: locale, dom, paint,
 * panel, live. */

/* ----- the text model (what anchors are captured from) */

function mainEl() {
  return D.querySelector('main');
}
function inUI(node) {
  var el = node && (node.nodeType === 1 ? node : node.parentElement);
  return !!(el && el.closest('[data-nb-ui]'));
}
/** Elements whose text is not reader text (skipped with their whole subtree). */
function skipped(el) {
  var tag = el.localName;
  if (tag === 'script' || tag === 'style') return true;
  if (el.hasAttribute('data-nb-ui')) return true;
  var cl = el.classList;
  if (cl.contains('mermaid') && (tag === 'pre' || el.hasAttribute('data-nb-src') || el.hasAttribute('data-processed'))) return true;
  // mdBook's own code-block buttons and playground output.
  if (tag === 'div' && cl.contains('buttons') && el.parentElement && el.parentElement.localName === 'pre') return true;
  if (tag === 'code' && cl.contains('result')) return true;
  return false;
}
/** The flat text of `root`: every reader Text node's value, in document order. */
function textModel(root) {
  var nodes = [];
  var starts = [];
  var parts = [];
  var index = new Map();
  var pos = 0;
  var walker = D.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
    acceptNode: function (n) {
      if (n.nodeType === 3) return NodeFilter.FILTER_ACCEPT;
      return skipped(n) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
    }
  });
  for (var n = walker.nextNode(); n; n = walker.nextNode()) {
    index.set(n, nodes.length);
    nodes.push(n);
    starts.push(pos);
    parts.push(n.nodeValue);
    pos += n.nodeValue.length;
  }
  return { nodes: nodes, starts: starts, index: index, text: parts.join('') };
}
/** The flat offset of a boundary point: the length of the reader text before it. */
function flatOffset(m, container, offset) {
  if (container.nodeType === 3 && m.index.has(container)) {
    var i = m.index.get(container);
    return m.starts[i] + Math.max(0, Math.min(offset, container.nodeValue.length));
  }
  // An element boundary (or a point in skipped text): count the reader text nodes before it.
  var probe = D.createRange();
  probe.setStart(container, offset);
  probe.collapse(true);
  var lo = 0;
  var hi = m.nodes.length;
  while (lo < hi) {
    var mid = (lo + hi) >> 1;
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
  var probe = D.createRange();
  probe.setStart(container, offset);
  probe.collapse(true);
  var last = null;
  var hs = main.querySelectorAll('h1, h2, h3, h4');
  for (var i = 0; i < hs.length; i++) {
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
  var main = mainEl();
  if (!main || !range || typeof range.startContainer === 'undefined') return null;
  if (!main.contains(range.startContainer) || !main.contains(range.endContainer)) return null;
  var m = textModel(main);
  var text = m.text;
  var s = flatOffset(m, range.startContainer, range.startOffset);
  var e = flatOffset(m, range.endContainer, range.endOffset);
  if (e < s) { var x = s; s = e; e = x; }
  if (s > 0 && isLowSurrogate(text.charCodeAt(s))) s--;
  if (e < text.length && isLowSurrogate(text.charCodeAt(e))) e++;
  var quote = text.slice(s, e);
  if (!quote.trim()) return null;
  var ps = Math.max(0, s - 40);
  if (ps > 0 && isLowSurrogate(text.charCodeAt(ps))) ps++;
  var se = Math.min(text.length, e + 40);
  if (se < text.length && isLowSurrogate(text.charCodeAt(se))) se--;
  return {
    quote: quote,
    prefix: text.slice(ps, s),
    suffix: text.slice(e, se),
    section: sectionAt(main, range.startContainer, range.startOffset)
  };
}
window.__notabene.captureAnchor = captureAnchor;
window.__notabene.flatText = function () {
  var main = mainEl();
  return main ? textModel(main).text : '';
};

/* ----- selection → "Comment" */

function setupSelection() {
  var btn = h('button', {
    type: 'button',
    class: 'nb-sel-btn nb-ui',
    'data-nb-ui': '',
    hidden: true,
    'aria-label': t('commentOnSel'),
    'aria-keyshortcuts': 'Control+Alt+M Meta+Alt+M',
    title: t('commentOnSel') + ' (Ctrl+Alt+M)'
  }, h('span', { 'aria-hidden': 'true', text: '💬' }), ' ' + t('commentVerb'));
  D.body.appendChild(btn);
  W.selBtn = btn;
  // Keep the selection alive while the button is pressed.
  btn.addEventListener('pointerdown', function (e) { e.preventDefault(); });
  btn.addEventListener('mousedown', function (e) { e.preventDefault(); });
  btn.addEventListener('click', function (e) {
    e.preventDefault();
    e.stopPropagation();
    var r = W.selRange;
    hideSelBtn();
    if (r) composeSelection(r);
  });
  var timer = 0;
  var later = function (ms) {
    clearTimeout(timer);
    timer = setTimeout(function () { safely('selection', checkSelection); }, ms);
  };
  D.addEventListener('pointerup', function () { later(0); });
  D.addEventListener('pointercancel', function () { later(120); });
  D.addEventListener('keyup', function (e) {
    if (e.shiftKey || e.key === 'Shift' || e.key === 'Home' || e.key === 'End') later(0);
  });
  D.addEventListener('selectionchange', function () { later(120); });
  // From the keyboard: Ctrl+Alt+M (⌘+⌥+M) comments on the selection.
  D.addEventListener('keydown', function (e) {
    if (!(e.ctrlKey || e.metaKey) || !e.altKey || e.shiftKey || e.code !== 'KeyM') return;
    safely('selection', checkSelection);
    if (!btn.hidden && W.selRange) {
      e.preventDefault();
      btn.click();
    }
  });
  window.addEventListener('scroll', placeSelBtn, { passive: true });
  window.addEventListener('resize', placeSelBtn);
}

function selectable(r) {
  var main = mainEl();
  if (!main || !main.contains(r.commonAncestorContainer)) return false;
  if (inUI(r.commonAncestorContainer)) return false;
  if (!String(r).trim()) return false;
  return !!captureAnchor(r);
}

function checkSelection() {
  var sel = window.getSelection();
  var r = sel && sel.rangeCount ? sel.getRangeAt(0) : null;
  if (!r || r.collapsed || W.compose || !selectable(r)) {
    hideSelBtn();
    return;
  }
  W.selRange = r.cloneRange();
  W.selBackward = false;
  try {
    var p = D.createRange();
    p.setStart(sel.anchorNode, sel.anchorOffset);
    W.selBackward = p.comparePoint(sel.focusNode, sel.focusOffset) < 0;
  } catch (e) { /* detached nodes */ }
  var btn = W.selBtn;
  btn.hidden = false;
  btn.classList.toggle('nb-docked', !!(window.matchMedia && window.matchMedia('(pointer: coarse)').matches));
  placeSelBtn();
}
function hideSelBtn() {
  if (W.selBtn) W.selBtn.hidden = true;
  W.selRange = null;
}
function placeSelBtn() {
  var btn = W.selBtn;
  var r = W.selRange;
  if (!btn || btn.hidden || !r) return;
  if (btn.classList.contains('nb-docked')) {
    btn.style.left = '';
    btn.style.top = '';
    return;
  }
  var rects = Array.prototype.filter.call(r.getClientRects(), function (x) { return x.width > 0 || x.height > 0; });
  var box = rects.length ? (W.selBackward ? rects[0] : rects[rects.length - 1]) : r.getBoundingClientRect();
  var w = btn.offsetWidth;
  var bh = btn.offsetHeight;
  var vw = HTML.clientWidth;
  var vh = window.innerHeight;
  var left = Math.max(8, Math.min((W.selBackward ? box.left : box.right) - w / 2, vw - w - 8));
  var top = W.selBackward ? box.top - bh - 8 : box.bottom + 8;
  if (top + bh > vh - 8) top = box.top - bh - 8;
  if (top < 8) top = Math.min(vh - bh - 8, box.bottom + 8);
  btn.style.left = Math.round(left + window.scrollX) + 'px';
  btn.style.top = Math.round(top + window.scrollY) + 'px';
}

function composeSelection(range) {
  var anchor = captureAnchor(range);
  if (!anchor) return;
  if (S.hasHighlights) safely('pending', function () { CSS.highlights.set('nb-pending', new Highlight(range)); });
  var sel = window.getSelection();
  if (sel) sel.removeAllRanges();
  openComposer({
    icon: '',
    preview: '“' + truncate(anchor.quote, 120) + '”',
    rect: function () { return range.getBoundingClientRect(); },
    range: range,
    suggestQuote: anchor.quote,
    payload: function (body, author, suggestion) {
      var p = { page: W.page, space: W.space, scope: 'selection', anchor: anchor, author: author, body: body };
      if (suggestion !== null) p.suggestion = { text: suggestion };
      return p;
    }
  });
}

/* ----- the composer popover */

function openComposer(o) {
  closeComposer(false);
  closeThread(false);
  var ta = h('textarea', {
    class: 'nb-input nb-compose-body',
    rows: '4',
    placeholder: t('bodyPlaceholder'),
    'aria-label': t('bodyPlaceholder'),
    'data-nb-draft': ''
  });
  var err = h('p', { class: 'nb-error', role: 'alert', hidden: true });
  // A selection can carry a suggested edit: the replacement, starting from the quote.
  var suggesting = false;
  var sugTa = null;
  var sugToggle = null;
  var sugBox = null;
  if (typeof o.suggestQuote === 'string') {
    sugTa = h('textarea', {
      class: 'nb-input nb-suggest-text',
      rows: '2',
      'aria-label': t('suggestLabel'),
      'data-nb-draft-suggest': ''
    });
    sugBox = h('label', { class: 'nb-field nb-suggest-field', hidden: true }, h('span', { text: t('suggestLabel') }), sugTa);
    sugToggle = h('button', { type: 'button', class: 'nb-btn nb-suggest-toggle', 'aria-expanded': 'false', text: '✎ ' + t('suggestChange') });
    sugToggle.addEventListener('click', function () {
      suggesting = !suggesting;
      sugBox.hidden = !suggesting;
      sugToggle.setAttribute('aria-expanded', suggesting ? 'true' : 'false');
      ta.placeholder = suggesting ? t('suggestWhy') : t('bodyPlaceholder');
      if (suggesting) {
        if (!sugTa.value) sugTa.value = o.suggestQuote;
        sugTa.setAttribute('data-nb-draft', '');
        sugTa.focus();
        sugTa.select();
      } else {
        sugTa.removeAttribute('data-nb-draft');
      }
    });
  }
  var save = h('button', { type: 'button', class: 'nb-btn nb-primary nb-compose-save', text: t('save') });
  var cancel = h('button', { type: 'button', class: 'nb-btn nb-compose-cancel', text: t('cancel') });
  var close = h('button', { type: 'button', class: 'nb-close', 'aria-label': t('close'), title: t('close'), text: '×' });
  var pop = h('div', {
    class: 'nb-pop nb-compose nb-ui',
    'data-nb-ui': '',
    role: 'dialog',
    'aria-label': t('newComment'),
    tabindex: '-1'
  },
  h('div', { class: 'nb-pop-head' }, h('span', { class: 'nb-pop-title', text: t('newComment') }), close),
  h('div', { class: 'nb-pop-body' },
    h('blockquote', { class: 'nb-thread-quote nb-compose-quote' + (o.icon ? ' nb-thread-block' : ''), text: o.preview }),
    sugToggle,
    sugBox,
    ta,
    h('p', { class: 'nb-hint', text: t('saveHint') }),
    err,
    h('div', { class: 'nb-form-actions' }, cancel, save)));
  D.body.appendChild(pop);
  W.compose = { pop: pop, rect: o.rect, opener: o.opener || null };
  placeFloating(pop, o.rect, null);
  ta.focus({ preventScroll: true });
  var submit = function () {
    var body = ta.value.trim();
    var suggestion = suggesting ? sugTa.value : null;
    if (suggestion !== null && suggestion === o.suggestQuote) {
      showError(err, t('sameSuggestion'));
      sugTa.focus();
      return;
    }
    if (!body && suggestion === null) {
      showError(err, t('emptyBody'));
      ta.focus();
      return;
    }
    withAuthor(function (author) {
      busy([save, cancel], true);
      showError(err, null);
      api('POST', 'comments', o.payload(body, author, suggestion)).then(function (created) {
        ta.value = '';
        if (sugTa) sugTa.value = '';
        closeComposer(false);
        safely('new comment', function () { showCreated(created, o.range); });
        wroteSomething();
      }, function (e) {
        busy([save, cancel], false);
        showError(err, e);
        ta.focus();
      });
    }, ta);
  };
  save.addEventListener('click', submit);
  cancel.addEventListener('click', function () { closeComposer(true); });
  close.addEventListener('click', function () { closeComposer(true); });
  [ta, sugTa].forEach(function (box) {
    if (!box) return;
    box.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        submit();
      }
    });
  });
  pop.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      closeComposer(true);
    }
  });
}
function closeComposer(restoreFocus) {
  var c = W.compose;
  if (!c) return;
  W.compose = null;
  c.pop.remove();
  if (S.hasHighlights) safely('pending', function () { CSS.highlights.delete('nb-pending'); });
  if (restoreFocus && c.opener && c.opener.isConnected) c.opener.focus();
  maybeReload();
}
