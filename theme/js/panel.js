/* Panel — threads and their places: a thread's rendering (with what changed in the text
 * since the comment, and where else its detached text stands), the page discussion, the header
 * counts, the side panel with its filters, flash and jump, the popover / bottom sheet, pointer
 * and keyboard events, deep links (?nb=ID). The thread actions and the Apply button are the
 * write side's (Actions): Start hands them over (useWriteTools), drawn once W.on. Uses:
 * Locale, Dom, Words, Paint, Print ("Print with comments"), Toolbar (icons), Live (W). */

/* exported Panel */
const Panel = (() => {
  const D = document;
  const HTML = document.documentElement;
  const { ROOT, t, tn } = Locale;
  const { anch, append, arr, cssEscape, displayName, firstMessage, fmtTs, h, headEl, obj,
    repliesText, resolutionLabel, safely, scopeOf, siteHref, statusLabel, statusOf, str, truncate } = Dom;
  const { appendWords, wordDiff } = Words;
  const { S, codeIdsAt, flash, flashCode, idsAt, isOrphan, located, narrow } = Paint;
  const { W } = Live;
  const { icon } = Toolbar;

  const threadOpts = new WeakMap();
  // The write side's thread actions and Apply button (actions.js, a later layer): start.js
  // hands them over; they are drawn only once the write side is on (W.on).
  let write = null;
  /** Takes the write side's `{threadActions(c), addApply(box, c)}`. */
  function useWriteTools(tools) {
    write = tools;
  }

  /* ----------------------------------------------------------- the thread */

  /** Renders a whole thread (status, hold, messages, resolution). */
  function renderThread(c, opts) {
    opts = opts || {};
    const status = statusOf(c);
    const wrap = h('div', { class: 'nb-thread', 'data-nb-id': str(c.id), 'data-nb-status': status });
    const head = h('div', { class: 'nb-thread-head' },
      h('span', { class: 'nb-status', 'data-nb-status': status, text: statusLabel(status) }));
    if (c.hold === true) head.appendChild(h('span', { class: 'nb-hold', text: `⏸ ${t('onHold')}` }));
    if (opts.orphan) head.appendChild(h('span', { class: 'nb-orphan-tag', text: `⚠ ${t('detached')}` }));
    wrap.appendChild(head);
    if (opts.quote) {
      const a = obj(c.anchor);
      const scope = scopeOf(c);
      if (scope === 'selection' && (a.quote || anch(c).text)) {
        wrap.appendChild(h('blockquote', { class: `nb-thread-quote${opts.orphan ? ' nb-orphan' : ''}`,
          text: (opts.orphan ? '⚠ ' : '') + str(a.quote || anch(c).text) }));
      } else if (scope === 'block') {
        wrap.appendChild(h('div', { class: 'nb-thread-quote nb-thread-block' }, headEl(c, 90, 70)));
      }
    }
    const sb = suggestionBox(c);
    if (sb) wrap.appendChild(sb);
    if (opts.orphan) wrap.appendChild(h('p', { class: 'nb-note', text: t('detachedLong') }));
    const same = sameTextNote(c);
    if (same) wrap.appendChild(same);
    const changed = changedNote(c);
    if (changed) wrap.appendChild(changed);
    const followed = obj(anch(c).followed);
    if (followed.from) {
      wrap.appendChild(h('p', { class: 'nb-note nb-followed', text: t('followed', { from: str(followed.from), by: str(followed.by) }) }));
    }
    const list = h('ol', { class: 'nb-msgs' });
    arr(c.thread).forEach((m) => {
      m = obj(m);
      const author = str(m.author);
      const li = h('li', { class: 'nb-msg' },
        h('div', { class: 'nb-msg-head' },
          h('span', { class: 'nb-author', title: author || null, text: displayName(author) }),
          m.ts ? h('time', { class: 'nb-time', datetime: str(m.ts), text: fmtTs(m.ts) }) : null),
        h('div', { class: 'nb-body', text: str(m.body) }));
      list.appendChild(li);
    });
    wrap.appendChild(list);
    const res = obj(c.resolution);
    if (c.resolution && !opts.noResolution && (res.note || status !== 'open')) {
      wrap.appendChild(h('p', { class: 'nb-resolution' },
        h('span', { class: 'nb-resolution-label', text: resolutionLabel(c) }),
        str(res.note)));
    }
    if (status === 'addressed' && !opts.noReviewLink) {
      wrap.appendChild(h('a', { class: 'nb-validate', href: `${ROOT}review.html`, text: t('toValidate') }));
    }
    threadOpts.set(wrap, opts);
    if (W.on && write && !opts.noActions) wrap.appendChild(write.threadActions(c));
    return wrap;
  }
  /** The options each rendered thread was drawn with (a redraw keeps them). */
  function threadOptsOf(wrap) {
    return threadOpts.get(wrap) || {};
  }

  /**
   * What changed in the text since the comment, for an anchor placed with changes
   * (`anchoring.changed`: the stored words and the words there now): each change as «old» →
   * «new», the old words in `<del>` and the new ones in `<ins>`. Null without one.
   */
  function changedNote(c) {
    const ch = obj(anch(c).changed);
    if (typeof ch.was !== 'string' || typeof ch.now !== 'string') return null;
    let ops = wordDiff(ch.was, ch.now);
    // `now` reaches further than `was` on both sides: what it has beyond is context, not a change.
    if (ops.length && ops[0].t === 'ins') ops = ops.slice(1);
    if (ops.length && ops[ops.length - 1].t === 'ins' && !(ops.length > 1 && ops[ops.length - 2].t === 'del')) ops = ops.slice(0, -1);
    const p = h('p', { class: 'nb-note nb-changed' }, t('textChanged'));
    let any = false;
    for (let i = 0; i < ops.length; i++) {
      const o = ops[i];
      if (o.t === 'eq') continue;
      const del = o.t === 'del' ? o.s.trim() : '';
      const ins = o.t === 'ins' ? o.s.trim() : (ops[i + 1] && ops[i + 1].t === 'ins' ? ops[++i].s.trim() : '');
      if (!del && !ins) continue;
      p.appendChild(D.createTextNode(any ? '; ' : ' '));
      any = true;
      const change = h('span', { class: 'nb-change' });
      if (del && ins) {
        change.appendChild(D.createTextNode('«'));
        change.appendChild(h('del', { class: 'nb-word', text: del }));
        change.appendChild(D.createTextNode('» → «'));
        change.appendChild(h('ins', { class: 'nb-word', text: ins }));
        change.appendChild(D.createTextNode('»'));
      } else {
        change.appendChild(D.createTextNode(`${t(del ? 'changedRemoved' : 'changedAdded')} «`));
        change.appendChild(h(del ? 'del' : 'ins', { class: 'nb-word', text: del || ins }));
        change.appendChild(D.createTextNode('»'));
      }
      p.appendChild(change);
    }
    return any ? p : null;
  }

  /** For a detached comment whose text stands on another page (`anchoring.sameText`): "The same
   * text is on PAGE", linked to it. A suggestion only: the comment stays here. Null without one. */
  function sameTextNote(c) {
    const st = obj(anch(c).sameText);
    const name = str(st.chapter) || str(st.page);
    if (!name) return null;
    const text = t('sameTextOn', { page: '\u0000' }).split('\u0000');
    const href = siteHref(st.url);
    return h('p', { class: 'nb-note nb-same-text' }, text[0],
      href ? h('a', { href, text: name }) : name, text[1] || '');
  }

  /** A suggested edit: the quote with the removed words struck and the new ones inserted;
   * under serve, an Apply button while it is open and not applied. Null without one. */
  function suggestionBox(c) {
    const sg = obj(c.suggestion);
    if (typeof sg.quote !== 'string' || typeof sg.text !== 'string') return null;
    const applied = !!sg.applied;
    const box = h('div', { class: 'nb-suggestion', 'data-nb-applied': applied ? 'true' : 'false' },
      h('span', { class: 'nb-suggestion-label', text: applied ? t('suggestionApplied') : t('suggestion') }));
    box.appendChild(appendWords(h('p', { class: 'nb-suggestion-text' }), wordDiff(sg.quote, sg.text), 'both'));
    if (W.on && write) write.addApply(box, c);
    return box;
  }

  /* ----- page discussion */

  function setupDiscussion(islands) {
    islands.forEach((isl) => {
      const pageComments = S.order.filter((c) => scopeOf(c) === 'page' && S.islandOf.get(str(c.id)) === isl);
      if (!pageComments.length) return;
      const live = pageComments.filter((c) => statusOf(c) !== 'resolved');
      const done = pageComments.filter((c) => statusOf(c) === 'resolved');
      const section = discussionSection(isl);
      const list = section.querySelector('.nb-discussion-list');
      live.forEach((c) => { list.appendChild(discussionItem(c)); });
      if (done.length) {
        const more = h('details', { class: 'nb-discussion-resolved' },
          h('summary', { text: tn('resolvedCount', done.length) }));
        const l2 = h('ol', { class: 'nb-discussion-list' });
        done.forEach((c) => { l2.appendChild(discussionItem(c)); });
        more.appendChild(l2);
        section.appendChild(more);
      }
    });
  }
  /** The discussion section of an island's chapter (created, empty, after the island). */
  function discussionSection(isl) {
    const next = isl.nextElementSibling;
    if (next && next.classList.contains('nb-discussion')) return next;
    const section = h('section', {
      class: 'nb-discussion nb-ui',
      id: S.discussion ? null : 'nb-discussion',
      'aria-label': t('pageDiscussion'),
      'data-nb-ui': ''
    });
    section.appendChild(h('div', { class: 'nb-discussion-title', role: 'heading', 'aria-level': '2' },
      icon('comment'), ` ${t('pageDiscussion')}`));
    section.appendChild(h('ol', { class: 'nb-discussion-list' }));
    isl.parentNode.insertBefore(section, isl.nextSibling);
    if (!S.discussion) S.discussion = section;
    return section;
  }
  function discussionItem(c) {
    const li = h('li', { class: 'nb-discussion-item', 'data-nb-id': str(c.id), tabindex: '-1' });
    if (c.hold === true) li.classList.add('nb-held');
    li.appendChild(renderThread(c, {}));
    return li;
  }

  /* ----- panel */

  // Disjoint, so that their counts add up to All: a comment whose text is gone is detached
  // (whatever its status, until it is resolved), never also open or to validate.
  const FILTERS = [['open', 'fOpen'], ['addressed', 'fAddressed'], ['resolved', 'fResolved'], ['detached', 'fDetached'], ['all', 'fAll']];
  function filterOf(c) {
    const s = statusOf(c);
    if (s === 'resolved') return 'resolved';
    return isOrphan(c) ? 'detached' : s;
  }
  function matchesFilter(c, f) {
    return f === 'all' || filterOf(c) === f;
  }
  function railComments() {
    const list = S.order.filter((c) => scopeOf(c) !== 'page');
    const pos = (c) => {
      const id = str(c.id);
      const el = (S.marks.get(id) || [])[0] || S.blocks.get(id) || (S.code.get(id) && S.code.get(id).code);
      return el || null;
    };
    return list.map((c, i) => ({ c, el: pos(c), i })).sort((a, b) => {
      if (a.el && b.el && a.el !== b.el) {
        return a.el.compareDocumentPosition(b.el) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1;
      }
      if (a.el && !b.el) return -1;
      if (!a.el && b.el) return 1;
      return a.i - b.i;
    }).map((x) => x.c);
  }

  function setupPanel() {
    const panel = h('aside', {
      id: 'nb-panel',
      class: 'nb-panel nb-ui',
      'data-nb-ui': '',
      'aria-label': t('panelTitle'),
      hidden: true
    });
    const close = h('button', { type: 'button', class: 'nb-close', 'aria-label': t('close'), title: t('close'), text: '×' });
    close.addEventListener('click', () => { setPanel(false, true); });
    panel.appendChild(h('div', { class: 'nb-panel-head' },
      h('h2', { class: 'nb-panel-title', text: t('panelTitle') }), close));
    const filters = h('div', { class: 'nb-filters', role: 'group', 'aria-label': t('filters') });
    FILTERS.forEach((f) => {
      const b = h('button', { type: 'button', class: 'nb-filter', 'data-filter': f[0], 'aria-pressed': 'false' });
      b.addEventListener('click', () => { S.filter = f[0]; renderPanelList(); });
      filters.appendChild(b);
    });
    panel.appendChild(filters);
    panel.appendChild(h('p', { class: 'nb-panel-empty', hidden: true }));
    panel.appendChild(h('ol', { class: 'nb-list' }));
    const foot = h('div', { class: 'nb-panel-foot' });
    const pageN = S.order.filter((c) => scopeOf(c) === 'page' && statusOf(c) !== 'resolved').length;
    if (S.discussion) {
      const dl = h('a', { class: 'nb-discussion-link', href: '#nb-discussion', text: t('pageDiscussionLink', { n: pageN }) });
      dl.addEventListener('click', (e) => {
        e.preventDefault();
        if (narrow()) setPanel(false);
        S.discussion.scrollIntoView({ block: 'start' });
        flash([S.discussion]);
      });
      foot.appendChild(dl);
    }
    foot.appendChild(h('a', { class: 'nb-all-link', href: `${ROOT}comments.html`, text: `${t('allComments')} →` }));
    const printB = h('button', { type: 'button', class: 'nb-print-btn' }, icon('print'), ` ${t('printWith')}`);
    printB.addEventListener('click', () => { Print.printWithComments(); });
    foot.appendChild(printB);
    panel.appendChild(foot);
    D.body.appendChild(panel);
    S.panel = panel;
    renderPanelList();

    let stored = null;
    try { stored = localStorage.getItem('notabene:panel'); } catch { /* storage off */ }
    const hasLive = S.order.some((c) => scopeOf(c) !== 'page' && statusOf(c) !== 'resolved');
    // A published build (`public`) starts with the panel closed: the reader asks for comments.
    const quiet = HTML.classList.contains('nb-public');
    const open = !narrow() && (stored ? stored === 'open' : hasLive && !quiet);
    setPanel(open, false);
    if (S.toggle) {
      S.toggle.addEventListener('click', () => { setPanel(S.panel.hidden, true); });
    }
    if (window.matchMedia) {
      const mq = window.matchMedia('(max-width: 1023.98px)');
      const onChange = () => {
        if (mq.matches && !S.panel.hidden) setPanel(false, false);
        HTML.classList.toggle('nb-panel-docked', !S.panel.hidden && !mq.matches);
      };
      if (mq.addEventListener) mq.addEventListener('change', onChange);
    }
  }

  function setPanel(open, remember) {
    if (!S.panel) return;
    S.panel.hidden = !open;
    HTML.classList.toggle('nb-panel-open', open);
    HTML.classList.toggle('nb-panel-docked', open && !narrow());
    if (S.toggle) S.toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
    if (remember && !narrow()) {
      try { localStorage.setItem('notabene:panel', open ? 'open' : 'closed'); } catch { /* storage off */ }
    }
    if (open && narrow() && remember) {
      const first = S.panel.querySelector('.nb-filter[aria-pressed="true"]') || S.panel.querySelector('button');
      if (first) first.focus();
    }
    if (!open && remember && S.toggle && S.panel.contains(D.activeElement)) S.toggle.focus();
  }

  function renderPanelList() {
    if (!S.panel) return;
    const all = railComments();
    S.panel.querySelectorAll('.nb-filter').forEach((b) => {
      const f = b.getAttribute('data-filter');
      const n = all.filter((c) => matchesFilter(c, f)).length;
      const key = FILTERS.filter((x) => x[0] === f)[0][1];
      b.textContent = '';
      append(b, [`${t(key)} `, h('span', { class: 'nb-filter-count', text: String(n) })]);
      b.setAttribute('aria-pressed', f === S.filter ? 'true' : 'false');
    });
    const list = S.panel.querySelector('.nb-list');
    list.textContent = '';
    const shown = all.filter((c) => matchesFilter(c, S.filter));
    shown.forEach((c) => { list.appendChild(panelEntry(c)); });
    const empty = S.panel.querySelector('.nb-panel-empty');
    empty.hidden = shown.length > 0;
    empty.textContent = all.length ? t('noneForFilter') : t('noneOnPage');
  }

  function panelEntry(c) {
    const id = str(c.id);
    const status = statusOf(c);
    const orphan = isOrphan(c);
    const li = h('li', {
      class: `nb-entry${orphan ? ' nb-orphan' : ''}${c.hold === true ? ' nb-held' : ''}`,
      'data-nb-id': id,
      'data-nb-status': status
    });
    const fm = firstMessage(c);
    const n = arr(c.thread).length;
    const chip = headEl(c, 90, 70, orphan ? 'nb-orphan' : '');
    if (orphan) chip.insertBefore(D.createTextNode('⚠ '), chip.firstChild);
    const main = h('button', { type: 'button', class: 'nb-entry-main', 'aria-expanded': 'false' },
      h('span', { class: 'nb-entry-top' },
        h('span', { class: 'nb-dot', 'data-nb-status': status, title: statusLabel(status) }),
        chip),
      h('span', { class: 'nb-entry-meta' },
        h('span', { class: 'nb-author', text: displayName(fm.author) }),
        n > 1 ? h('span', { class: 'nb-replies', text: ` · ${repliesText(n - 1)}` }) : null,
        c.hold === true ? h('span', { class: 'nb-hold', text: ` ⏸ ${t('onHold')}` }) : null,
        status !== 'open' ? h('span', { class: 'nb-status-text', text: ` · ${statusLabel(status)}` }) : null),
      h('span', { class: 'nb-entry-first', text: truncate(fm.body, 140) }));
    const st = obj(anch(c).sameText);
    if (orphan && (st.chapter || st.page)) {
      main.appendChild(h('span', { class: 'nb-entry-same', text: t('sameTextOn', { page: str(st.chapter) || str(st.page) }) }));
    }
    const body = h('div', { class: 'nb-entry-thread', hidden: true });
    main.addEventListener('click', () => {
      const expand = body.hidden;
      if (located(id) && statusOf(c) !== 'resolved') {
        if (narrow()) {
          setPanel(false, false);
          const el = jumpTo(id);
          openThread([id], el || S.toggle);
          return;
        }
        jumpTo(id);
      }
      setExpanded(li, expand);
    });
    li.appendChild(main);
    li.appendChild(body);
    return li;
  }
  function setExpanded(li, expand) {
    const body = li.querySelector('.nb-entry-thread');
    const main = li.querySelector('.nb-entry-main');
    const c = S.comments.get(li.getAttribute('data-nb-id'));
    if (expand && !body.firstChild && c) body.appendChild(renderThread(c, { orphan: isOrphan(c), quote: isOrphan(c) }));
    body.hidden = !expand;
    main.setAttribute('aria-expanded', expand ? 'true' : 'false');
  }

  /* ----- jump (the flash is Paint's) */

  /** Scrolls to and flashes a comment's place. Returns the element to anchor its thread to. */
  function jumpTo(id, ms) {
    const c = S.comments.get(id);
    const marks = S.marks.get(id) || [];
    if (marks.length) {
      marks[0].scrollIntoView({ block: 'center' });
      flash(marks, ms);
      return marks[0];
    }
    if (S.blocks.has(id)) {
      const host = S.blocks.get(id);
      host.scrollIntoView({ block: 'center' });
      flash([host], ms);
      return host.querySelector('.nb-badge') || host;
    }
    const ce = S.code.get(id);
    if (ce && ce.range) {
      const pre = ce.code.parentElement || ce.code;
      const r = ce.range.getBoundingClientRect();
      window.scrollBy(0, r.top - window.innerHeight / 2);
      flashCode(ce.range, ms);
      flash([pre], ms);
      return pre.querySelector('.nb-badge') || pre;
    }
    if (c && scopeOf(c) === 'page') {
      const item = D.querySelector(`.nb-discussion-item[data-nb-id="${cssEscape(id)}"]`);
      if (item) {
        const det = item.closest('details');
        if (det) det.open = true;
        item.scrollIntoView({ block: 'center' });
        flash([item], ms);
        return item;
      }
    }
    return null;
  }

  /** Shows a comment that has no place in the text (orphan, resolved) in the panel. */
  function revealInPanel(id, ms) {
    if (!S.panel) return null;
    const c = S.comments.get(id);
    if (c && !matchesFilter(c, S.filter)) { S.filter = 'all'; renderPanelList(); }
    setPanel(true, false);
    const li = S.panel.querySelector(`.nb-entry[data-nb-id="${cssEscape(id)}"]`);
    if (!li) return null;
    setExpanded(li, true);
    li.scrollIntoView({ block: 'nearest' });
    flash([li], ms);
    return li.querySelector('.nb-entry-main');
  }

  /* ----- the popover / bottom sheet */

  function closeThread(restoreFocus) {
    if (!S.pop) return;
    const pop = S.pop;
    const opener = S.opener;
    S.pop = null;
    S.popAnchor = null;
    S.opener = null;
    pop.remove();
    D.querySelectorAll('.nb-active').forEach((el) => { el.classList.remove('nb-active'); });
    if (restoreFocus && opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
  }

  /** Opens the threads of `ids` near `opener` (popover) or as a bottom sheet on narrow screens. */
  function openThread(ids, opener, rectFn) {
    closeThread(false);
    ids = ids.filter((id) => S.comments.has(id));
    if (!ids.length) return;
    const title = ids.length === 1 ? t('comment') : t('nComments', { n: ids.length });
    const close = h('button', { type: 'button', class: 'nb-close', 'aria-label': t('close'), title: t('close'), text: '×' });
    const pop = h('div', {
      class: 'nb-pop nb-ui',
      'data-nb-ui': '',
      role: 'dialog',
      'aria-label': title,
      tabindex: '-1'
    }, h('div', { class: 'nb-pop-head' }, h('span', { class: 'nb-pop-title', text: title }), close));
    const body = h('div', { class: 'nb-pop-body' });
    ids.forEach((id) => {
      const c = S.comments.get(id);
      body.appendChild(renderThread(c, { quote: true, orphan: isOrphan(c) }));
      (S.marks.get(id) || []).forEach((m) => { m.classList.add('nb-active'); });
    });
    pop.appendChild(body);
    close.addEventListener('click', () => { closeThread(true); });
    D.body.appendChild(pop);
    S.pop = pop;
    S.opener = opener || null;
    S.popAnchor = rectFn || (opener ? () => opener.getBoundingClientRect() : null);
    placePop();
    pop.focus({ preventScroll: true });
  }

  function placePop() {
    if (S.pop) placeFloating(S.pop, S.popAnchor, S.opener);
    if (W.compose) placeFloating(W.compose.pop, W.compose.rect, null);
  }
  /** Places a popover under (or above) `rectFn()`, or as a bottom sheet on narrow screens. */
  function placeFloating(pop, rectFn, opener) {
    if (!pop) return;
    if (narrow()) {
      pop.classList.add('nb-sheet');
      pop.style.left = '';
      pop.style.top = '';
      // Keep the commented text visible above the sheet.
      if (rectFn) {
        const ar = rectFn();
        const sheetTop = window.innerHeight - pop.offsetHeight;
        if (ar && (ar.bottom > sheetTop - 8 || ar.top < 0)) window.scrollBy(0, ar.top - Math.max(60, sheetTop / 3));
      }
      return;
    }
    pop.classList.remove('nb-sheet');
    const r = rectFn ? rectFn() : null;
    const vw = HTML.clientWidth;
    const vh = window.innerHeight;
    const w = pop.offsetWidth;
    const ph = pop.offsetHeight;
    // Under a badge, the popover hangs from the badge's right edge; elsewhere it starts at the text.
    let left = r ? (opener && opener.classList && opener.classList.contains('nb-badge') ? r.right - w : r.left) : (vw - w) / 2;
    let top = r ? r.bottom + 8 : vh / 4;
    const maxRight = vw - 8 - (S.panel && !S.panel.hidden && !narrow() ? S.panel.offsetWidth : 0);
    left = Math.max(8, Math.min(left, maxRight - w));
    if (r && top + ph > vh - 8 && r.top - ph - 8 > 8) top = r.top - ph - 8;
    pop.style.left = `${Math.round(left + window.scrollX)}px`;
    pop.style.top = `${Math.round(top + window.scrollY)}px`;
  }

  /* ----- events */

  function setupEvents() {
    D.addEventListener('click', (e) => {
      const target = e.target;
      if (!(target instanceof Element)) return;
      if (target.closest('.nb-pop')) return;
      if (target.closest('[data-nb-ui]') && !target.closest('.nb-badge')) return;
      const b = target.closest('.nb-badge[data-nb-ids]');
      if (b) {
        e.preventDefault();
        e.stopPropagation();
        openThread(str(b.getAttribute('data-nb-ids')).split(/\s+/).filter(Boolean), b);
        return;
      }
      if (target.closest('a[href], button, input, textarea, select, label.checkbox-label img')) {
        if (!target.closest('mark.nb-mark') || target.closest('a[href]')) return;
      }
      const sel = window.getSelection ? window.getSelection() : null;
      if (sel && sel.rangeCount && !sel.isCollapsed && String(sel).trim()) return; // a drag that selected text
      const ids = idsAt(target);
      if (ids.length) {
        const mark = target.closest('mark.nb-mark');
        const x = e.clientX, y = e.clientY;
        openThread(ids, mark, () => rectNear(mark, x, y));
        return;
      }
      if (S.code.size) {
        const cids = codeIdsAt(target, e.clientX, e.clientY);
        if (cids.length) {
          const entry = S.code.get(cids[0]);
          const pre = entry.code.parentElement;
          openThread(cids, pre.querySelector('.nb-badge') || pre, () => entry.range ? entry.range.getBoundingClientRect() : pre.getBoundingClientRect());
          return;
        }
      }
    }, false);

    D.addEventListener('pointerdown', (e) => {
      if (!S.pop) return;
      const target = e.target;
      if (!(target instanceof Element)) return;
      if (S.pop.contains(target) || target.closest('mark.nb-mark, .nb-badge, .nb-entry, #nb-panel-toggle')) return;
      closeThread(false);
    }, true);

    D.addEventListener('keydown', (e) => {
      const target = e.target;
      if (e.key === 'Escape') {
        if (S.pop) {
          e.preventDefault();
          closeThread(true);
          return;
        }
        if (S.panel && !S.panel.hidden && narrow()) {
          e.preventDefault();
          setPanel(false, true);
          if (S.toggle) S.toggle.focus();
        }
        return;
      }
      if ((e.key === 'Enter' || e.key === ' ' || e.key === 'Spacebar') && target instanceof Element &&
          target.matches('mark.nb-mark[data-nb-id]')) {
        e.preventDefault();
        const ids = idsAt(target);
        if (ids.length) openThread(ids, target);
      }
    });

    D.addEventListener('mouseover', (e) => {
      const m = e.target instanceof Element && e.target.closest('mark.nb-mark[data-nb-id]');
      hoverGroup(m ? m.getAttribute('data-nb-id') : null);
    });

    let resizeQueued = false;
    window.addEventListener('resize', () => {
      if (resizeQueued) return;
      resizeQueued = true;
      (window.requestAnimationFrame || setTimeout)(() => {
        resizeQueued = false;
        placePop();
      });
    });
  }

  let hovered = null;
  function hoverGroup(id) {
    if (hovered === id) return;
    if (hovered) (S.marks.get(hovered) || []).forEach((m) => { m.classList.remove('nb-hover'); });
    hovered = id;
    if (id) (S.marks.get(id) || []).forEach((m) => { m.classList.add('nb-hover'); });
  }
  function rectNear(el, x, y) {
    const rects = el.getClientRects();
    for (let i = 0; i < rects.length; i++) {
      const r = rects[i];
      if (x >= r.left - 4 && x <= r.right + 4 && y >= r.top - 10 && y <= r.bottom + 10) return r;
    }
    return el.getBoundingClientRect();
  }

  /* ----- deep links: ?nb=ID (and notabene's ?c=ID) */

  function setupDeepLink() {
    let params;
    try { params = new URLSearchParams(window.location.search); } catch { return; }
    const id = params.get('nb') || params.get('c');
    if (!id || !S.comments.has(id)) return;
    if (W.restoring) return; // a live reload: the reader's scroll position wins
    let done = false;
    const go = () => {
      if (done) return;
      done = true;
      safely('deep link', () => { openDeepLink(id); });
    };
    if (D.readyState === 'complete') go();
    else {
      window.addEventListener('load', go);
      setTimeout(go, 1500);
    }
  }
  function openDeepLink(id) {
    const c = S.comments.get(id);
    const scope = scopeOf(c);
    if (scope !== 'page' && (!located(id) || statusOf(c) === 'resolved')) {
      const entry = revealInPanel(id, 2500);
      if (entry) entry.focus({ preventScroll: true });
      return;
    }
    const el = jumpTo(id, 2500);
    if (!el) return;
    if (scope === 'page') {
      el.focus({ preventScroll: true });
      return;
    }
    const ce = S.code.get(id);
    openThread([id], el, ce && ce.range ? () => ce.range.getBoundingClientRect() : null);
  }

  /** After the live reload that follows the reader's own action: that comment's thread open
   * again where it is (its mark, badge or page discussion; a closed or detached one expanded in
   * the panel), without moving the page. */
  function reopen(id) {
    const c = S.comments.get(id);
    if (!c) return;
    if (scopeOf(c) === 'page') {
      const wrap = D.querySelector(`.nb-discussion .nb-thread[data-nb-id="${cssEscape(id)}"]`);
      if (wrap) {
        wrap.setAttribute('tabindex', '-1');
        wrap.focus({ preventScroll: true });
      }
      return;
    }
    const marks = S.marks.get(id) || [];
    const host = S.blocks.get(id);
    const ce = S.code.get(id);
    const el = marks[0] || (host && (host.querySelector('.nb-badge') || host)) ||
      (ce && ce.code.parentElement && ce.code.parentElement.querySelector('.nb-badge'));
    if (el && statusOf(c) !== 'resolved') {
      openThread([id], el, ce && ce.range ? () => ce.range.getBoundingClientRect() : null);
      return;
    }
    const entry = revealInPanel(id, 0);
    if (entry) entry.focus({ preventScroll: true });
  }

  return { changedNote, closeThread, reopen, discussionSection, placeFloating,
    renderPanelList, renderThread, sameTextNote, setupDeepLink, setupDiscussion,
    setupEvents, setupPanel, threadOptsOf, useWriteTools };
})();
