/* Compose — writing a comment: selection -> "Comment" (pointer, touch, Ctrl+Alt+M), the
 * composer popover (with a suggested edit on a selection), and the created comment shown at
 * once (its mark, its panel entry). Uses: Locale, Dom, TextModel, Paint, Live, Panel. */

/* exported Compose */
const Compose = (() => {
  const D = document;
  const HTML = document.documentElement;
  const { t } = Locale;
  const { h, obj, safely, saveHint, scopeOf, statusOf, str, truncate } = Dom;
  const { captureAnchor, inUI, mainEl } = TextModel;
  const { addComment, decorateMark, hasComment, hasHighlights, wrapRange } = Paint;
  const { icon } = Toolbar;
  const { api, busy, maybeReload, showError, withAuthor, wroteSomething } = Live;
  const { closeThread, placeFloating, renderPanelList } = Panel;

  /* ----- selection → "Comment" */

  // Owned here: where new comments go (the page's one chapter: `{page, space}`, handed over by
  // setupSelection), the selection the "Comment" button offers to comment on, and the open
  // composer.
  let target = null;
  let selBtn = null;
  let selRange = null;
  let selBackward = false;
  let composing = null; // {pop, rect, opener, range}

  /** The "Comment" button on a selection in the chapter, whose comments go to `where`
   * (`{page, space}`). */
  function setupSelection(where) {
    target = where;
    const btn = h('button', {
      type: 'button',
      class: 'nb-sel-btn nb-ui',
      'data-nb-ui': '',
      hidden: true,
      'aria-label': t('commentOnSel'),
      'aria-keyshortcuts': 'Control+Alt+M Meta+Alt+M',
      title: `${t('commentOnSel')} (Ctrl+Alt+M)`
    }, icon('comment'), ` ${t('commentVerb')}`);
    D.body.appendChild(btn);
    selBtn = btn;
    // Keep the selection alive while the button is pressed.
    btn.addEventListener('pointerdown', (e) => { e.preventDefault(); });
    btn.addEventListener('mousedown', (e) => { e.preventDefault(); });
    btn.addEventListener('click', (e) => {
      e.preventDefault();
      e.stopPropagation();
      const r = selRange;
      hideSelBtn();
      if (r) composeSelection(r);
    });
    let timer = 0;
    const later = (ms) => {
      clearTimeout(timer);
      timer = setTimeout(() => { safely('selection', checkSelection); }, ms);
    };
    D.addEventListener('pointerup', () => { later(0); });
    D.addEventListener('pointercancel', () => { later(120); });
    D.addEventListener('keyup', (e) => {
      if (e.shiftKey || e.key === 'Shift' || e.key === 'Home' || e.key === 'End') later(0);
    });
    D.addEventListener('selectionchange', () => { later(120); });
    // From the keyboard: Ctrl+Alt+M (⌘+⌥+M) comments on the selection.
    D.addEventListener('keydown', (e) => {
      if (!(e.ctrlKey || e.metaKey) || !e.altKey || e.shiftKey || e.code !== 'KeyM') return;
      safely('selection', checkSelection);
      if (!btn.hidden && selRange) {
        e.preventDefault();
        btn.click();
      }
    });
    window.addEventListener('scroll', placeSelBtn, { passive: true });
    window.addEventListener('resize', placeSelBtn);
  }

  function selectable(r) {
    const main = mainEl();
    if (!main || !main.contains(r.commonAncestorContainer)) return false;
    if (inUI(r.commonAncestorContainer)) return false;
    if (!String(r).trim()) return false;
    return !!captureAnchor(r);
  }

  function checkSelection() {
    const sel = window.getSelection();
    const r = sel && sel.rangeCount ? sel.getRangeAt(0) : null;
    if (!r || r.collapsed || composing || !selectable(r)) {
      hideSelBtn();
      return;
    }
    selRange = r.cloneRange();
    selBackward = false;
    try {
      const p = D.createRange();
      p.setStart(sel.anchorNode, sel.anchorOffset);
      selBackward = p.comparePoint(sel.focusNode, sel.focusOffset) < 0;
    } catch { /* detached nodes */ }
    const btn = selBtn;
    btn.hidden = false;
    btn.classList.toggle('nb-docked', !!(window.matchMedia && window.matchMedia('(pointer: coarse)').matches));
    placeSelBtn();
  }
  function hideSelBtn() {
    if (selBtn) selBtn.hidden = true;
    selRange = null;
  }
  function placeSelBtn() {
    const btn = selBtn;
    const r = selRange;
    if (!btn || btn.hidden || !r) return;
    if (btn.classList.contains('nb-docked')) {
      btn.style.left = '';
      btn.style.top = '';
      return;
    }
    const rects = [...r.getClientRects()].filter((x) => x.width > 0 || x.height > 0);
    const box = rects.length ? (selBackward ? rects[0] : rects[rects.length - 1]) : r.getBoundingClientRect();
    const w = btn.offsetWidth;
    const bh = btn.offsetHeight;
    const vw = HTML.clientWidth;
    const vh = window.innerHeight;
    const left = Math.max(8, Math.min((selBackward ? box.left : box.right) - w / 2, vw - w - 8));
    let top = selBackward ? box.top - bh - 8 : box.bottom + 8;
    if (top + bh > vh - 8) top = box.top - bh - 8;
    if (top < 8) top = Math.min(vh - bh - 8, box.bottom + 8);
    btn.style.left = `${Math.round(left + window.scrollX)}px`;
    btn.style.top = `${Math.round(top + window.scrollY)}px`;
  }

  function composeSelection(range) {
    const anchor = captureAnchor(range);
    if (!anchor) return;
    if (hasHighlights) safely('pending', () => { CSS.highlights.set('nb-pending', new Highlight(range)); });
    const sel = window.getSelection();
    if (sel) sel.removeAllRanges();
    openComposer({
      icon: '',
      preview: `“${truncate(anchor.quote, 120)}”`,
      rect() { return range.getBoundingClientRect(); },
      range,
      suggestQuote: anchor.quote,
      payload(body, author, suggestion) {
        const p = { page: target.page, space: target.space, scope: 'selection', anchor, author, body };
        if (suggestion !== null) p.suggestion = { text: suggestion };
        return p;
      }
    });
  }

  /* ----- the composer popover */

  function openComposer(o) {
    closeComposer(false);
    closeThread(false);
    const ta = h('textarea', {
      class: 'nb-input nb-compose-body',
      rows: '4',
      placeholder: t('bodyPlaceholder'),
      'aria-label': t('bodyPlaceholder'),
      'data-nb-draft': ''
    });
    const err = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    // A selection can carry a suggested edit: the replacement, starting from the quote.
    let suggesting = false;
    let sugTa = null;
    let sugToggle = null;
    let sugBox = null;
    if (typeof o.suggestQuote === 'string') {
      sugTa = h('textarea', {
        class: 'nb-input nb-suggest-text',
        rows: '2',
        'aria-label': t('suggestLabel'),
        'data-nb-draft-suggest': ''
      });
      sugBox = h('label', { class: 'nb-field nb-suggest-field', hidden: true }, h('span', { text: t('suggestLabel') }), sugTa);
      sugToggle = h('button', { type: 'button', class: 'nb-btn nb-suggest-toggle', 'aria-expanded': 'false', text: `✎ ${t('suggestChange')}` });
      sugToggle.addEventListener('click', () => {
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
    const save = h('button', { type: 'button', class: 'nb-btn nb-primary nb-compose-save', text: t('save') });
    const cancel = h('button', { type: 'button', class: 'nb-btn nb-compose-cancel', text: t('cancel') });
    const close = h('button', { type: 'button', class: 'nb-close', 'aria-label': t('close'), title: t('close'), text: '×' });
    const pop = h('div', {
      class: 'nb-pop nb-compose nb-ui',
      'data-nb-ui': '',
      role: 'dialog',
      'aria-label': t('newComment'),
      tabindex: '-1'
    },
    h('div', { class: 'nb-pop-head' }, h('span', { class: 'nb-pop-title', text: t('newComment') }), close),
    h('div', { class: 'nb-pop-body' },
      h('blockquote', { class: `nb-thread-quote nb-compose-quote${o.icon ? ' nb-thread-block' : ''}`, text: o.preview }),
      sugToggle,
      sugBox,
      ta,
      saveHint('p'),
      err,
      h('div', { class: 'nb-form-actions' }, cancel, save)));
    D.body.appendChild(pop);
    composing = { pop, rect: o.rect, opener: o.opener || null, range: o.range || null };
    placeFloating(pop, o.rect, null);
    ta.focus({ preventScroll: true });
    const submit = () => {
      const body = ta.value.trim();
      const suggestion = suggesting ? sugTa.value : null;
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
      withAuthor(async (author) => {
        busy([save, cancel], true);
        showError(err, null);
        let created;
        try {
          created = await api('POST', 'comments', o.payload(body, author, suggestion));
        } catch (e) {
          busy([save, cancel], false);
          showError(err, e);
          ta.focus();
          return;
        }
        ta.value = '';
        if (sugTa) sugTa.value = '';
        closeComposer(false);
        safely('new comment', () => { showCreated(created, o.range); });
        wroteSomething();
      }, ta);
    };
    save.addEventListener('click', submit);
    cancel.addEventListener('click', () => { closeComposer(true); });
    close.addEventListener('click', () => { closeComposer(true); });
    [ta, sugTa].forEach((box) => {
      if (!box) return;
      box.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          submit();
        }
      });
    });
    pop.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        closeComposer(true);
      }
    });
  }
  /** Focus back on the text a selection was made in (its block, made focusable for the
   * moment), with the selection as it was: Escape leaves the reader where they were. */
  function backToText(range) {
    const node = range.startContainer;
    const el = node && (node.nodeType === 1 ? node : node.parentElement);
    const block = el && el.closest('p, li, td, th, dd, dt, blockquote, h1, h2, h3, h4, h5, h6, figcaption, main');
    if (!block || !block.isConnected) return;
    if (!block.hasAttribute('tabindex')) {
      block.setAttribute('tabindex', '-1');
      block.addEventListener('blur', () => { block.removeAttribute('tabindex'); }, { once: true });
    }
    block.focus({ preventScroll: true });
    const sel = window.getSelection();
    if (sel) {
      sel.removeAllRanges();
      sel.addRange(range);
    }
  }
  /** Puts the open composer back beside what it comments on (after a scroll or a resize). */
  function placeComposer() {
    if (composing) placeFloating(composing.pop, composing.rect, null);
  }
  function closeComposer(restoreFocus) {
    const c = composing;
    if (!c) return;
    composing = null;
    c.pop.remove();
    if (hasHighlights) safely('pending', () => { CSS.highlights.delete('nb-pending'); });
    if (restoreFocus && c.opener && c.opener.isConnected) c.opener.focus();
    else if (restoreFocus && c.range) backToText(c.range);
    maybeReload();
  }

  /** A comment the API has just created: shown at once — its mark on the text it was written
   * on, its entry in the panel — before the rebuilt page arrives (which the live reload then
   * takes, or holds back while a draft is open). */
  function showCreated(c, range) {
    c = obj(c);
    const id = str(c.id);
    if (!id || hasComment(id)) return;
    if (!c.anchoring) c.anchoring = { status: scopeOf(c) === 'page' ? 'page' : 'exact' };
    addComment(c);
    if (range && scopeOf(c) === 'selection') wrapRange(range, id, statusOf(c)).forEach(decorateMark);
    safely('panel', renderPanelList);
  }

  return { openComposer, placeComposer, setupSelection };
})();
