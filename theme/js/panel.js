/* Panel — threads in their places (a thread itself is Thread's): the page discussion, the
 * side panel with its filters, jump, the popover / bottom sheet, pointer and keyboard events,
 * deep links (?nb=ID). The composer is the write side's (Compose): Start hands over its placing
 * (useComposer), done with the popovers'. Uses: Locale, Dom, Paint, Print ("Print with
 * comments"), Toolbar (icons), Live (isRestoring), Thread. */

/* exported Panel */
const Panel = (() => {
  const D = document;
  const HTML = document.documentElement;
  const { ROOT, t, tn } = Locale;
  const { anch, append, arr, cssEscape, displayName, firstMessage, h, headEl, obj, repliesText, safely, scopeOf,
    statusLabel, statusOf, str, truncate } = Dom;
  const { blockHostOf, codeIdsAt, codeOf, comment, comments, flash, flashCode, hasCodeComments, hasComment, idsAt,
    isOrphan, islandOf, located, marksOf, narrow } = Paint;
  const { isRestoring } = Live;
  const { icon } = Toolbar;
  const { renderThread } = Thread;

  // Owned here: the side panel and its toggle (the header's, handed over to setupPanel), the
  // page discussion, the panel's filter, the open thread popover (with what it is placed
  // beside and who opened it).
  const ui = {
    panel: null,
    toggle: null,
    discussion: null,
    filter: 'open',
    pop: null,
    popAnchor: null,
    opener: null
  };
  // The composer's placing (compose.js, a later layer): start.js hands it over.
  let placeComposer = null;
  /** Takes the write side's `placeComposer()`, called with the popovers' own placing. */
  function useComposer(place) {
    placeComposer = place;
  }

  /* ----- page discussion */

  function setupDiscussion(islands) {
    islands.forEach((isl) => {
      const pageComments = comments().filter((c) => scopeOf(c) === 'page' && islandOf(str(c.id)) === isl);
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
      id: ui.discussion ? null : 'nb-discussion',
      'aria-label': t('pageDiscussion'),
      'data-nb-ui': ''
    });
    section.appendChild(h('div', { class: 'nb-discussion-title', role: 'heading', 'aria-level': '2' },
      icon('comment'), ` ${t('pageDiscussion')}`));
    section.appendChild(h('ol', { class: 'nb-discussion-list' }));
    isl.parentNode.insertBefore(section, isl.nextSibling);
    if (!ui.discussion) ui.discussion = section;
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
    const list = comments().filter((c) => scopeOf(c) !== 'page');
    const pos = (c) => {
      const id = str(c.id);
      const el = marksOf(id)[0] || blockHostOf(id) || (codeOf(id) && codeOf(id).code);
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

  /** The side panel, opened and closed by `toggle` (the header's button; null when there is
   * none). */
  function setupPanel(toggle) {
    ui.toggle = toggle;
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
      b.addEventListener('click', () => { ui.filter = f[0]; renderPanelList(); });
      filters.appendChild(b);
    });
    panel.appendChild(filters);
    panel.appendChild(h('p', { class: 'nb-panel-empty', hidden: true }));
    panel.appendChild(h('ol', { class: 'nb-list' }));
    const foot = h('div', { class: 'nb-panel-foot' });
    const pageN = comments().filter((c) => scopeOf(c) === 'page' && statusOf(c) !== 'resolved').length;
    if (ui.discussion) {
      const dl = h('a', { class: 'nb-discussion-link', href: '#nb-discussion', text: t('pageDiscussionLink', { n: pageN }) });
      dl.addEventListener('click', (e) => {
        e.preventDefault();
        if (narrow()) setPanel(false);
        ui.discussion.scrollIntoView({ block: 'start' });
        flash([ui.discussion]);
      });
      foot.appendChild(dl);
    }
    foot.appendChild(h('a', { class: 'nb-all-link', href: `${ROOT}comments.html`, text: `${t('allComments')} →` }));
    const printB = h('button', { type: 'button', class: 'nb-print-btn' }, icon('print'), ` ${t('printWith')}`);
    printB.addEventListener('click', () => { Print.printWithComments(); });
    foot.appendChild(printB);
    panel.appendChild(foot);
    D.body.appendChild(panel);
    ui.panel = panel;
    renderPanelList();

    let stored = null;
    try { stored = localStorage.getItem('notabene:panel'); } catch { /* storage off */ }
    const hasLive = comments().some((c) => scopeOf(c) !== 'page' && statusOf(c) !== 'resolved');
    // A published build (`public`) starts with the panel closed: the reader asks for comments.
    const quiet = HTML.classList.contains('nb-public');
    const open = !narrow() && (stored ? stored === 'open' : hasLive && !quiet);
    setPanel(open, false);
    if (ui.toggle) {
      ui.toggle.addEventListener('click', () => { setPanel(ui.panel.hidden, true); });
    }
    if (window.matchMedia) {
      const mq = window.matchMedia('(max-width: 1023.98px)');
      const onChange = () => {
        if (mq.matches && !ui.panel.hidden) setPanel(false, false);
        HTML.classList.toggle('nb-panel-docked', !ui.panel.hidden && !mq.matches);
      };
      if (mq.addEventListener) mq.addEventListener('change', onChange);
    }
  }

  /** The panel's foot (where the write side puts the identity control), or null. */
  function panelFoot() {
    return ui.panel ? ui.panel.querySelector('.nb-panel-foot') : null;
  }

  function setPanel(open, remember) {
    if (!ui.panel) return;
    ui.panel.hidden = !open;
    HTML.classList.toggle('nb-panel-open', open);
    HTML.classList.toggle('nb-panel-docked', open && !narrow());
    if (ui.toggle) ui.toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
    if (remember && !narrow()) {
      try { localStorage.setItem('notabene:panel', open ? 'open' : 'closed'); } catch { /* storage off */ }
    }
    if (open && narrow() && remember) {
      const first = ui.panel.querySelector('.nb-filter[aria-pressed="true"]') || ui.panel.querySelector('button');
      if (first) first.focus();
    }
    if (!open && remember && ui.toggle && ui.panel.contains(D.activeElement)) ui.toggle.focus();
  }

  function renderPanelList() {
    if (!ui.panel) return;
    const all = railComments();
    ui.panel.querySelectorAll('.nb-filter').forEach((b) => {
      const f = b.getAttribute('data-filter');
      const n = all.filter((c) => matchesFilter(c, f)).length;
      const key = FILTERS.filter((x) => x[0] === f)[0][1];
      b.textContent = '';
      append(b, [`${t(key)} `, h('span', { class: 'nb-filter-count', text: String(n) })]);
      b.setAttribute('aria-pressed', f === ui.filter ? 'true' : 'false');
    });
    const list = ui.panel.querySelector('.nb-list');
    list.textContent = '';
    const shown = all.filter((c) => matchesFilter(c, ui.filter));
    shown.forEach((c) => { list.appendChild(panelEntry(c)); });
    const empty = ui.panel.querySelector('.nb-panel-empty');
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
          openThread([id], el || ui.toggle);
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
    const c = comment(li.getAttribute('data-nb-id'));
    if (expand && !body.firstChild && c) body.appendChild(renderThread(c, { orphan: isOrphan(c), quote: isOrphan(c) }));
    body.hidden = !expand;
    main.setAttribute('aria-expanded', expand ? 'true' : 'false');
  }

  /* ----- jump (the flash is Paint's) */

  /** Scrolls to and flashes a comment's place. Returns the element to anchor its thread to. */
  function jumpTo(id, ms) {
    const c = comment(id);
    const marks = marksOf(id);
    if (marks.length) {
      marks[0].scrollIntoView({ block: 'center' });
      flash(marks, ms);
      return marks[0];
    }
    const host = blockHostOf(id);
    if (host) {
      host.scrollIntoView({ block: 'center' });
      flash([host], ms);
      return host.querySelector('.nb-badge') || host;
    }
    const ce = codeOf(id);
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
    if (!ui.panel) return null;
    const c = comment(id);
    if (c && !matchesFilter(c, ui.filter)) { ui.filter = 'all'; renderPanelList(); }
    setPanel(true, false);
    const li = ui.panel.querySelector(`.nb-entry[data-nb-id="${cssEscape(id)}"]`);
    if (!li) return null;
    setExpanded(li, true);
    li.scrollIntoView({ block: 'nearest' });
    flash([li], ms);
    return li.querySelector('.nb-entry-main');
  }

  /* ----- the popover / bottom sheet */

  function closeThread(restoreFocus) {
    if (!ui.pop) return;
    const pop = ui.pop;
    const opener = ui.opener;
    ui.pop = null;
    ui.popAnchor = null;
    ui.opener = null;
    pop.remove();
    D.querySelectorAll('.nb-active').forEach((el) => { el.classList.remove('nb-active'); });
    if (restoreFocus && opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
  }

  /** Opens the threads of `ids` near `opener` (popover) or as a bottom sheet on narrow screens. */
  function openThread(ids, opener, rectFn) {
    closeThread(false);
    ids = ids.filter((id) => hasComment(id));
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
      const c = comment(id);
      body.appendChild(renderThread(c, { quote: true, orphan: isOrphan(c) }));
      marksOf(id).forEach((m) => { m.classList.add('nb-active'); });
    });
    pop.appendChild(body);
    close.addEventListener('click', () => { closeThread(true); });
    D.body.appendChild(pop);
    ui.pop = pop;
    ui.opener = opener || null;
    ui.popAnchor = rectFn || (opener ? () => opener.getBoundingClientRect() : null);
    placePop();
    pop.focus({ preventScroll: true });
  }

  function placePop() {
    if (ui.pop) placeFloating(ui.pop, ui.popAnchor, ui.opener);
    if (placeComposer) placeComposer();
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
    const maxRight = vw - 8 - (ui.panel && !ui.panel.hidden && !narrow() ? ui.panel.offsetWidth : 0);
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
      if (hasCodeComments()) {
        const cids = codeIdsAt(target, e.clientX, e.clientY);
        if (cids.length) {
          const entry = codeOf(cids[0]);
          const pre = entry.code.parentElement;
          openThread(cids, pre.querySelector('.nb-badge') || pre, () => entry.range ? entry.range.getBoundingClientRect() : pre.getBoundingClientRect());
          return;
        }
      }
    }, false);

    D.addEventListener('pointerdown', (e) => {
      if (!ui.pop) return;
      const target = e.target;
      if (!(target instanceof Element)) return;
      if (ui.pop.contains(target) || target.closest('mark.nb-mark, .nb-badge, .nb-entry, #nb-panel-toggle')) return;
      closeThread(false);
    }, true);

    D.addEventListener('keydown', (e) => {
      const target = e.target;
      if (e.key === 'Escape') {
        if (ui.pop) {
          e.preventDefault();
          closeThread(true);
          return;
        }
        if (ui.panel && !ui.panel.hidden && narrow()) {
          e.preventDefault();
          setPanel(false, true);
          if (ui.toggle) ui.toggle.focus();
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
    // A focused mark lights all its pieces, as hovering does.
    D.addEventListener('focusin', (e) => {
      const m = e.target instanceof Element && e.target.matches('mark.nb-mark[data-nb-id]') ? e.target : null;
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
    if (hovered) marksOf(hovered).forEach((m) => { m.classList.remove('nb-hover'); });
    hovered = id;
    if (id) marksOf(id).forEach((m) => { m.classList.add('nb-hover'); });
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
    if (!id || !hasComment(id)) return;
    if (isRestoring()) return; // a live reload: the reader's scroll position wins
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
    const c = comment(id);
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
    const ce = codeOf(id);
    openThread([id], el, ce && ce.range ? () => ce.range.getBoundingClientRect() : null);
  }

  /** After the live reload that follows the reader's own action: that comment's thread open
   * again where it is (its mark, badge or page discussion; a closed or detached one expanded in
   * the panel), without moving the page. */
  function reopen(id) {
    const c = comment(id);
    if (!c) return;
    if (scopeOf(c) === 'page') {
      const wrap = D.querySelector(`.nb-discussion .nb-thread[data-nb-id="${cssEscape(id)}"]`);
      if (wrap) {
        wrap.setAttribute('tabindex', '-1');
        wrap.focus({ preventScroll: true });
      }
      return;
    }
    const marks = marksOf(id);
    const host = blockHostOf(id);
    const ce = codeOf(id);
    const el = marks[0] || (host && (host.querySelector('.nb-badge') || host)) ||
      (ce && ce.code.parentElement && ce.code.parentElement.querySelector('.nb-badge'));
    if (el && statusOf(c) !== 'resolved') {
      openThread([id], el, ce && ce.range ? () => ce.range.getBoundingClientRect() : null);
      return;
    }
    const entry = revealInPanel(id, 0);
    if (entry) entry.focus({ preventScroll: true });
  }

  return { closeThread, reopen, discussionSection, panelFoot, placeFloating, renderPanelList, setupDeepLink,
    setupDiscussion, setupEvents, setupPanel, useComposer };
})();
