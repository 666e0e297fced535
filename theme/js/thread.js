/* Thread — a comment's thread as the reader sees it: its status, messages and resolution,
 * what changed in the text since the comment, where else its detached text stands, and a
 * suggested edit. Under serve, the thread actions and the Apply button are the write side's
 * (Actions, a later layer): Start hands them over (useWriteTools), and they are drawn once the
 * page is writable. Uses: Locale, Dom, Words, Live (writable). */

/* exported Thread */
const Thread = (() => {
  const D = document;
  const { ROOT, t } = Locale;
  const { anch, arr, displayName, fmtTs, h, headEl, obj, resolutionLabel, scopeOf, siteHref, statusLabel, statusOf,
    str } = Dom;
  const { appendWords, wordDiff } = Words;
  const { writable } = Live;

  const threadOpts = new WeakMap();
  // Owned here: the write side's `{threadActions(c), addApply(box, c)}`, handed over by start.js.
  let write = null;
  /** Takes the write side's `{threadActions(c), addApply(box, c)}`. */
  function useWriteTools(tools) {
    write = tools;
  }

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
    if (writable() && write && !opts.noActions) wrap.appendChild(write.threadActions(c));
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
    if (writable() && write) write.addApply(box, c);
    return box;
  }

  return { changedNote, renderThread, sameTextNote, threadOptsOf, useWriteTools };
})();
