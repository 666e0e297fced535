/* Views — the generated chapters: /review (cards, diffs, approve / reject through the API
 * when served, else the commands to run), /comments (search and filters) and /journal, and
 * the header link of those pages. Uses: Locale, Dom, Words, Live (writable and the API), Panel
 * (threads, notes), Toolbar (the header link). */

/* exported Views */
const Views = (() => {
  const D = document;
  const { ROOT, t, tn } = Locale;
  const { anch, arr, copyText, displayName, firstMessage, fmtDay, fmtTs, h, headEl, num, obj, repliesText,
    resolutionLabel, credits, safely, siteHref, statusLabel, statusOf, str, truncate, unlean, withParam } = Dom;
  const { appendWords, wordDiff } = Words;
  const { api, busy, didSomething, holdReload, showError, withAuthor, writable } = Live;
  const { changedNote, renderThread, sameTextNote } = Thread;
  const { mount, reviewLink } = Toolbar;

  /* ========================================================= generated views */

  function initView(app, data) {
    const view = app.getAttribute('data-nb-view') || str(data.view);
    app.classList.add('nb-ui');
    app.textContent = '';
    if (view === 'review') renderReview(app, data);
    else if (view === 'comments') renderCommentsView(app, data);
    else if (view === 'journal') renderJournal(app, data);
    return view;
  }

  /** The header of a generated view: the review link, when one is due. */
  function viewHeader(view, data) {
    let addressed = 0;
    let force = false;
    if (view === 'review') {
      addressed = arr(data.cards).length;
      force = str(data.mode).toLowerCase() === 'approve';
    } else if (view === 'comments') {
      addressed = arr(data.comments).filter((c) => statusOf(c) === 'addressed').length;
    }
    mount([reviewLink(addressed, force)]);
  }

  /* ----- review */

  const diffViews = []; // {el, lines, rendered} re-rendered when the mode changes
  function narrowScreen() {
    return !!(window.matchMedia && window.matchMedia('(max-width: 639.98px)').matches);
  }
  /** unified, split (not on narrow screens) or rendered ("as rendered": the change in the
   * page's text). */
  function diffMode() {
    let m = null;
    try { m = localStorage.getItem('notabene:diffMode'); } catch { /* storage off */ }
    if (m === 'rendered') return m;
    return m === 'split' && !narrowScreen() ? 'split' : 'unified';
  }

  let reviewDiffs = []; // the diffs the cards' changes share (`diff` is an index into it)
  const reviewComments = new Map(); // id -> the comment of a card or a suggestion on /review
  function renderReview(app, data) {
    const cards = arr(data.cards);
    const suggestions = arr(data.suggestions).filter((c) => c && typeof c === 'object');
    reviewDiffs = arr(data.diffs);
    cards.forEach((card) => {
      if (card && card.comment && typeof card.comment === 'object') {
        unlean(card.comment, data);
        reviewComments.set(str(card.comment.id), card.comment);
      }
    });
    suggestions.forEach((c) => {
      unlean(c, data);
      reviewComments.set(str(c.id), c);
    });
    const mode = str(data.mode).toLowerCase();
    const root = h('div', { class: 'nb-review' });
    root.appendChild(h('p', { class: 'nb-view-intro', text: mode === 'approve' ? t('modeApprove') : t('modeAuto') }));
    if (suggestions.length) {
      // Suggested edits not applied yet: each with its Apply button under serve.
      const sec = h('section', { class: 'nb-suggestions' },
        h('h2', { class: 'nb-suggestions-head', text: t('suggestionsHead', { n: suggestions.length }) }));
      suggestions.forEach((c) => {
        safely('suggestion', () => {
          const url = siteHref(c.url || anch(c).url);
          const art = h('article', { class: 'nb-card nb-suggestion-card', 'data-nb-id': str(c.id), 'data-nb-status': statusOf(c) });
          art.appendChild(h('header', { class: 'nb-card-head' }, pageRef(url, anch(c).chapter, c.page, 'nb-card-page')));
          art.appendChild(renderThread(c, { noReviewLink: true, noActions: true }));
          sec.appendChild(art);
        });
      });
      root.appendChild(sec);
    }
    if (!cards.length) {
      root.appendChild(h('p', { class: 'nb-empty nb-nothing', text: t('nothingToValidate') }));
      app.appendChild(root);
      return;
    }
    const toolbar = h('div', { class: 'nb-review-toolbar' },
      h('h2', { class: 'nb-count-text', text: t('cardsCount', { n: cards.length }) }));
    const modes = h('div', { class: 'nb-diff-modes', role: 'group', 'aria-label': t('diffView') });
    [['unified', 'unified'], ['split', 'split'], ['rendered', 'asRendered']].forEach((m) => {
      const b = h('button', { type: 'button', class: 'nb-diff-mode', 'data-mode': m[0], 'aria-pressed': 'false', text: t(m[1]) });
      b.addEventListener('click', () => {
        try { localStorage.setItem('notabene:diffMode', m[0]); } catch { /* storage off */ }
        refreshDiffs();
      });
      modes.appendChild(b);
    });
    toolbar.appendChild(modes);
    root.appendChild(toolbar);
    const commands = obj(data.commands);
    cards.forEach((card) => {
      safely('review card', () => { root.appendChild(reviewCard(obj(card), commands)); });
    });
    app.appendChild(root);
    refreshDiffs();
    if (window.matchMedia) {
      const mq = window.matchMedia('(max-width: 639.98px)');
      if (mq.addEventListener) mq.addEventListener('change', refreshDiffs);
    }
  }

  function refreshDiffs() {
    const mode = diffMode();
    const narrow = narrowScreen();
    D.querySelectorAll('.nb-diff-mode').forEach((b) => {
      const which = b.getAttribute('data-mode');
      b.setAttribute('aria-pressed', which === mode ? 'true' : 'false');
      b.disabled = narrow && which === 'split';
    });
    diffViews.forEach((v) => {
      v.el.textContent = '';
      v.el.setAttribute('data-mode', mode);
      if (mode === 'rendered') v.el.appendChild(renderedView(v.rendered));
      else v.el.appendChild(mode === 'split' ? splitTable(v.lines) : unifiedTable(v.lines));
    });
  }

  function reviewCard(card, commands) {
    const c = obj(card.comment);
    const id = str(c.id);
    const url = siteHref(c.url || anch(c).url);
    const art = h('article', { class: 'nb-card', 'data-nb-id': id, 'data-nb-status': statusOf(c) });
    art.appendChild(h('header', { class: 'nb-card-head' },
      pageRef(url, anch(c).chapter, c.page, 'nb-card-page'),
      headEl(c, 90, 70, 'nb-card-anchor')));
    art.appendChild(renderThread(c, { noReviewLink: true, noResolution: true, noActions: true }));
    const note = card.note !== null && card.note !== undefined ? str(card.note) : str(obj(c.resolution).note);
    if (note) {
      art.appendChild(h('p', { class: 'nb-proposed' },
        h('span', { class: 'nb-resolution-label', text: resolutionLabel(c) }), note));
    }
    const k = credits(c);
    const who = [k.proposer ? t('creditProposer', { who: k.proposer }) : '',
      k.applier ? t('creditApplier', { who: k.applier }) : '',
      k.approver ? t('creditApprover', { who: k.approver }) : ''].filter(Boolean);
    if (who.length) art.appendChild(h('p', { class: 'nb-credits', text: who.join(' · ') }));
    const entry = card.entry && typeof card.entry === 'object' ? card.entry : null;
    if (entry) {
      art.appendChild(h('p', { class: 'nb-entry-ref' },
        h('span', { class: 'nb-resolution-label', text: t('journalEntry') }),
        h('a', { href: `${ROOT}journal.html`, text: str(entry.title) || str(entry.id) }),
        entry.date ? ` (${fmtDay(entry.date)})` : '',
        entry.summary ? h('span', { class: 'nb-entry-summary', text: ` — ${str(entry.summary)}` }) : null));
    }
    const problem = str(card.problem);
    if (problem) {
      const detail = { 'no-journal-link': 'pNoLink', 'unknown-journal-entry': 'pUnknownEntry', 'not-in-journal-changes': 'pNotInChanges' }[problem];
      art.appendChild(h('p', { class: 'nb-problem', 'data-problem': problem },
        h('strong', { text: t('noChanges') }), detail ? ` — ${t(detail)}` : ''));
    }
    arr(card.changes).forEach((ch) => {
      safely('change', () => { art.appendChild(changeBlock(obj(ch))); });
    });
    art.appendChild(cardActions(id, url, commands, c));
    return art;
  }

  /** A link (or plain text without a URL) naming a chapter by its title, with the page id
   * beside it as a secondary detail; the page id alone when the chapter is gone. */
  function pageRef(url, chapter, page, cls) {
    const title = str(chapter) || str(page);
    const link = url ? h('a', { class: cls || null, href: url, text: title }) : h('span', { class: cls || null, text: title });
    if (!str(chapter) || !str(page) || str(chapter) === str(page)) return link;
    const f = D.createDocumentFragment();
    f.appendChild(link);
    f.appendChild(D.createTextNode(' '));
    f.appendChild(h('small', { class: 'nb-page-id', text: str(page) }));
    return f;
  }

  function changeBlock(ch) {
    const sec = h('section', { class: 'nb-change' });
    const url = siteHref(ch.url);
    const title = h('h3', { class: 'nb-change-head' },
      pageRef(url, ch.chapter, str(ch.page) || str(ch.file)),
      ch.what ? ` — ${str(ch.what)}` : '');
    sec.appendChild(title);
    if (ch.why) sec.appendChild(h('p', { class: 'nb-why', text: str(ch.why) }));
    sec.appendChild(diffBlock(obj(typeof ch.diff === 'number' ? reviewDiffs[ch.diff] : ch.diff), ch.file));
    const also = arr(ch.also);
    if (also.length) {
      const p = h('p', { class: 'nb-also' }, t('alsoCarries'));
      also.forEach((a, i) => {
        a = obj(a);
        const snip = `“${truncate(a.snippet, 40)}”`;
        const href = siteHref(a.url);
        if (i) p.appendChild(D.createTextNode(', '));
        p.appendChild(href ? h('a', { href, title: str(a.id), text: snip }) : h('span', { title: str(a.id), text: snip }));
      });
      sec.appendChild(p);
    }
    return sec;
  }

  function diffBlock(diff, file) {
    const wrap = h('div', { class: 'nb-diff-wrap' });
    const source = str(diff.source);
    const text = str(diff.text);
    const reason = str(diff.reason);
    let label = '';
    if (source === 'commit') label = t('diffCommit', { ref: str(diff.ref).slice(0, 12) || '?' });
    else if (source === 'worktree') label = t('diffWorktree');
    if (file || label) {
      wrap.appendChild(h('div', { class: 'nb-diff-meta' },
        file ? h('code', { class: 'nb-diff-file', text: str(file) }) : null,
        label ? h('span', { class: 'nb-diff-source', text: (file ? ' · ' : '') + label }) : null));
    }
    if (source === 'untracked') wrap.appendChild(h('p', { class: 'nb-diff-note', text: t('untracked') }));
    const lines = text ? pairWords(parseDiff(text)) : [];
    if (!lines.length) {
      const key = { 'no-git': 'noGit', unchanged: 'unchanged', 'page-not-found': 'pageNotFound', 'unknown-ref': 'unknownRef' }[reason] || 'noDiff';
      wrap.appendChild(h('p', { class: 'nb-diff-empty', 'data-reason': reason || source || 'none', text: t(key) }));
      return wrap;
    }
    const box = h('div', { class: 'nb-diff' });
    wrap.appendChild(box);
    diffViews.push({ el: box, lines, rendered: Array.isArray(diff.rendered) ? diff.rendered : null });
    return wrap;
  }

  /** "As rendered": each changed paragraph in the page's text, removed and added words marked. */
  function renderedView(changes) {
    const box = h('div', { class: 'nb-rendered' });
    if (!changes) {
      box.appendChild(h('p', { class: 'nb-diff-empty', 'data-reason': 'no-rendered', text: t('noRendered') }));
      return box;
    }
    if (!changes.length) {
      box.appendChild(h('p', { class: 'nb-diff-empty', 'data-reason': 'markup-only', text: t('markupOnly') }));
      return box;
    }
    changes.forEach((c) => {
      c = obj(c);
      const item = h('div', { class: 'nb-r-change' });
      if (c.section) item.appendChild(h('div', { class: 'nb-r-section', text: `§ ${str(c.section)}` }));
      item.appendChild(appendWords(h('p', { class: 'nb-r-text' }), wordDiff(str(c.del), str(c.add)), 'both'));
      box.appendChild(item);
    });
    return box;
  }

  /** Marks the changed words of each changed line pair: in a run of removed lines followed by
   * added ones, the k-th removed line with the k-th added one. */
  function pairWords(lines) {
    let i = 0;
    while (i < lines.length) {
      if (lines[i].type !== 'del') { i++; continue; }
      const dels = [], adds = [];
      while (i < lines.length && lines[i].type === 'del') dels.push(lines[i++]);
      while (i < lines.length && lines[i].type === 'add') adds.push(lines[i++]);
      for (let k = 0; k < Math.min(dels.length, adds.length); k++) {
        const ops = wordDiff(dels[k].text, adds[k].text);
        dels[k].words = ops;
        adds[k].words = ops;
      }
    }
    return lines;
  }
  /** The code cell of a diff line: its text, with the changed words marked when paired. */
  function codeCell(cls, l) {
    if (!l.words) return td(cls, l.text);
    return appendWords(h('td', { class: cls }), l.words, l.type === 'del' ? 'old' : 'new');
  }

  /** Parses a unified diff into hunk / add / del / ctx / note lines; file headers are dropped. */
  function parseDiff(text) {
    const out = [];
    let inHunk = false;
    let oldLeft = 0, newLeft = 0, oldNo = 0, newNo = 0;
    const src = text.split('\n');
    if (src.length && src[src.length - 1] === '') src.pop();
    src.forEach((raw) => {
      const line = raw.replace(/\r$/, '');
      const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/.exec(line);
      if (m) {
        inHunk = true;
        oldNo = +m[1];
        newNo = +m[3];
        oldLeft = m[2] === undefined ? 1 : +m[2];
        newLeft = m[4] === undefined ? 1 : +m[4];
        out.push({ type: 'hunk', text: line });
        return;
      }
      if (inHunk && (oldLeft > 0 || newLeft > 0)) {
        const sign = line.charAt(0);
        const body = line.slice(1);
        if (sign === '+') { out.push({ type: 'add', text: body, n: newNo++ }); newLeft--; return; }
        if (sign === '-') { out.push({ type: 'del', text: body, o: oldNo++ }); oldLeft--; return; }
        if (sign === ' ' || line === '') { out.push({ type: 'ctx', text: body, o: oldNo++, n: newNo++ }); oldLeft--; newLeft--; return; }
        if (sign === '\\') { out.push({ type: 'note', text: line }); return; }
        inHunk = false;
      }
      if (line.charAt(0) === '\\') { out.push({ type: 'note', text: line }); return; }
      inHunk = false;
      // Anything else is a file header (diff --git, index, ---, +++, mode lines): dropped.
    });
    return out;
  }

  function diffRow(cls, cells) {
    return h('tr', { class: cls }, cells);
  }
  function td(cls, text) {
    return h('td', { class: cls, text: text === undefined || text === null ? '' : String(text) });
  }
  function unifiedTable(lines) {
    const tb = h('tbody');
    lines.forEach((l) => {
      if (l.type === 'hunk' || l.type === 'note') {
        tb.appendChild(diffRow(`nb-d-${l.type}`, [h('td', { class: 'nb-d-full', colspan: '4', text: l.text })]));
        return;
      }
      const sign = l.type === 'add' ? '+' : (l.type === 'del' ? '-' : ' ');
      tb.appendChild(diffRow(`nb-d-${l.type}`, [td('nb-ln', l.o), td('nb-ln', l.n), td('nb-sign', sign), codeCell('nb-code', l)]));
    });
    return h('table', { class: 'nb-diff-table nb-diff-unified' }, tb);
  }
  function splitTable(lines) {
    const tb = h('tbody');
    let i = 0;
    const cell = (l, side) => {
      if (!l) return [td('nb-ln nb-d-none', ''), td('nb-code nb-d-none', '')];
      const cls = l.type === 'ctx' ? 'nb-d-ctx' : `nb-d-${l.type}`;
      return [td(`nb-ln ${cls}`, side === 'left' ? l.o : l.n), codeCell(`nb-code ${cls}`, l)];
    };
    while (i < lines.length) {
      const l = lines[i];
      if (l.type === 'hunk' || l.type === 'note') {
        tb.appendChild(diffRow(`nb-d-${l.type}`, [h('td', { class: 'nb-d-full', colspan: '4', text: l.text })]));
        i++;
      } else if (l.type === 'ctx') {
        tb.appendChild(diffRow('nb-d-ctx', cell(l, 'left').concat(cell(l, 'right'))));
        i++;
      } else {
        const dels = [], adds = [];
        while (i < lines.length && lines[i].type === 'del') dels.push(lines[i++]);
        while (i < lines.length && lines[i].type === 'add') adds.push(lines[i++]);
        for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
          tb.appendChild(diffRow('nb-d-pair', cell(dels[k], 'left').concat(cell(adds[k], 'right'))));
        }
      }
    }
    return h('table', { class: 'nb-diff-table nb-diff-split' }, tb);
  }

  /** POSIX shell single-quoting. */
  function shQuote(s) {
    return `'${str(s).replace(/'/g, "'\\''")}'`;
  }
  function fillCommand(template, id, reason) {
    const safeId = /^[A-Za-z0-9_.-]+$/.test(id) ? id : shQuote(id);
    let s = str(template);
    s = s.replace(/"\{id\}"|'\{id\}'|\{id\}/g, () => safeId);
    if (reason !== undefined) {
      s = s.replace(/"\{reason\}"|'\{reason\}'|\{reason\}/g, () => shQuote(reason));
    }
    return s;
  }

  function cardActions(id, url, commands, c) {
    const box = h('div', { class: 'nb-card-actions' });
    const row = h('div', { class: 'nb-actions-row' });
    if (url) {
      row.appendChild(h('a', { class: 'nb-btn nb-btn-link', href: url, text: t('viewInPage') }));
      // Under serve: the chapter opens with the in-page editor on the comment's block.
      const fix = new URL(url, location.href);
      fix.searchParams.set('edit', '1');
      row.appendChild(h('a', { class: 'nb-btn nb-btn-link nb-fix-in-page', href: fix.href, text: t('fixInPage') }));
    }
    const rejectB = h('button', { type: 'button', class: 'nb-btn nb-reject', 'aria-expanded': 'false', text: t('reject') });
    const approveB = h('button', { type: 'button', class: 'nb-btn nb-approve', 'aria-expanded': 'false', text: t('approve') });
    row.appendChild(rejectB);
    row.appendChild(approveB);
    box.appendChild(row);
    const reasonBox = h('textarea', { class: 'nb-reason', rows: '3', placeholder: t('reasonPlaceholder'), 'aria-label': t('reasonPlaceholder'), hidden: true });
    const cmdBox = h('div', { class: 'nb-cmd', hidden: true });
    const cmdCode = h('code', { class: 'nb-cmd-text' });
    const copyB = h('button', { type: 'button', class: 'nb-btn nb-copy', text: t('copy') });
    cmdBox.appendChild(h('p', { class: 'nb-note', text: t('staticNote') }));
    cmdBox.appendChild(h('div', { class: 'nb-cmd-row' }, h('pre', { class: 'nb-cmd-pre' }, cmdCode), copyB));
    // Write mode (serve): the reason is sent as a reply; the decision is written at once.
    const sendB = h('button', { type: 'button', class: 'nb-btn nb-reject-send', text: t('sendReject') });
    const sendRow = h('div', { class: 'nb-actions-row nb-reject-row', hidden: true }, sendB);
    const msg = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    const done = h('p', { class: 'nb-done', role: 'status', hidden: true });
    // An applied suggestion can be taken back with the rejection: a new suggested edit that
    // puts the old text back, applied at once (so the journal says so, and it can be reviewed).
    const sg = obj(c && c.suggestion);
    const revertable = !!sg.applied && str(sg.quote) !== '' && str(sg.text) !== '' && !!obj(c.anchor).quote;
    const revertBox = revertable ? h('input', { type: 'checkbox', class: 'nb-revert-check', checked: true }) : null;
    const revertRow = revertable
      ? h('label', { class: 'nb-revert', hidden: true }, revertBox, ' ', t('revertApplied', { was: truncate(sg.quote, 60) }))
      : null;
    box.appendChild(reasonBox);
    if (revertRow) box.appendChild(revertRow);
    box.appendChild(sendRow);
    box.appendChild(cmdBox);
    box.appendChild(msg);
    box.appendChild(done);
    let current = null;
    const approveTpl = str(commands.approve) || 'notabene comments done {id} --status resolved';
    const rejectTpl = str(commands.reject) || 'notabene comments reopen {id} --reply "{reason}"';
    const page = str(c && c.page);
    const show = (which) => {
      current = which;
      approveB.setAttribute('aria-expanded', which === 'approve' && !writable() ? 'true' : 'false');
      rejectB.setAttribute('aria-expanded', which === 'reject' ? 'true' : 'false');
      reasonBox.hidden = which !== 'reject';
      if (revertRow) revertRow.hidden = which !== 'reject' || !writable();
      if (writable()) {
        reasonBox.setAttribute('data-nb-draft', '');
        sendRow.hidden = which !== 'reject';
        cmdBox.hidden = true;
      } else {
        cmdBox.hidden = !which;
      }
      update();
    };
    const update = () => {
      cmdCode.textContent = current === 'reject' ? fillCommand(rejectTpl, id, reasonBox.value) : fillCommand(approveTpl, id);
      copyB.textContent = t('copy');
    };
    const decide = (fields, doneText, button) => {
      withAuthor(async (author) => {
        fields.page = page;
        fields.id = id;
        fields.author = author;
        if (fields.reply) fields.reply.author = author;
        busy([approveB, rejectB, sendB], true);
        showError(msg, null);
        let updated;
        try {
          updated = await api('PATCH', 'comments', fields);
        } catch (e) {
          busy([approveB, rejectB, sendB], false);
          showError(msg, e);
          if (button) button.focus();
          return;
        }
        reasonBox.value = '';
        const art = box.closest('.nb-card');
        if (art) {
          art.classList.add('nb-card-done');
          art.setAttribute('data-nb-status', statusOf(updated));
        }
        done.textContent = doneText;
        done.hidden = false;
        reasonBox.hidden = true;
        sendRow.hidden = true;
        if (revertRow) revertRow.hidden = true;
        const told = {
          text: fields.status === 'resolved' ? t('didApprove') : t('didReject'),
          id,
          undo: { page, id, updatedAt: str(obj(updated).updatedAt) }
        };
        if (fields.status !== 'open' || !revertBox || !revertBox.checked) {
          didSomething(told);
          return;
        }
        // The revert: a suggestion on the applied text whose replacement is the old text,
        // then applied. Undo is not offered for the pair; the new comment's own thread can
        // be rejected or reopened like any other.
        const was = str(sg.quote);
        holdReload((async () => {
          try {
            const made = await api('POST', 'comments', {
              page, space: str(c.space) || 'book', scope: 'selection', anchor: c.anchor, author,
              body: t('revertBody', { was: truncate(was, 60) }), suggestion: { text: was }
            });
            await api('POST', 'apply', { id: str(obj(made).id), author });
          } catch {
            didSomething({ text: t('revertFailed'), id, undo: null });
            return;
          }
          didSomething({ text: t('didRejectRevert', { was: truncate(was, 60) }), id, undo: null });
        })());
      }, button);
    };
    approveB.addEventListener('click', () => {
      if (writable() && page) {
        show(null);
        decide({ status: 'resolved' }, t('approvedDone'), approveB);
        return;
      }
      show(current === 'approve' ? null : 'approve');
    });
    rejectB.addEventListener('click', () => {
      show(current === 'reject' ? null : 'reject');
      if (current === 'reject') reasonBox.focus();
    });
    sendB.addEventListener('click', () => {
      const reason = reasonBox.value.trim();
      if (!reason) {
        showError(msg, t('needReason'));
        reasonBox.focus();
        return;
      }
      decide({ status: 'open', reply: { body: reason } }, t('rejectedDone'), sendB);
    });
    reasonBox.addEventListener('keydown', (e) => {
      if (writable() && e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        sendB.click();
      }
    });
    reasonBox.addEventListener('input', update);
    copyB.addEventListener('click', () => { copyText(cmdCode.textContent, cmdCode, copyB); });
    return box;
  }

  /* ----- comments view */

  function renderCommentsView(app, data) {
    const all = arr(data.comments).filter((c) => c && typeof c === 'object');
    all.forEach((c) => { unlean(c, data); });
    const root = h('div', { class: 'nb-comments-view' });
    const search = h('input', { type: 'search', class: 'nb-search', placeholder: t('searchPlaceholder'), 'aria-label': t('search') });
    const status = h('select', { class: 'nb-f-status', 'aria-label': t('status') });
    [['active', 'sActive'], ['open', 'fOpen'], ['addressed', 'fAddressed'], ['resolved', 'fResolved'], ['all', 'fAll']].forEach((o) => {
      status.appendChild(h('option', { value: o[0], text: t(o[1]) }));
    });
    const hold = h('select', { class: 'nb-f-hold', 'aria-label': t('hold') });
    [['all', 'holdAll'], ['held', 'held'], ['not', 'notHeld']].forEach((o) => {
      hold.appendChild(h('option', { value: o[0], text: t(o[1]) }));
    });
    const page = h('select', { class: 'nb-f-page', 'aria-label': t('page') });
    page.appendChild(h('option', { value: '', text: t('allPages') }));
    const pages = new Map();
    all.forEach((c) => {
      const p = str(c.page);
      if (p && !pages.has(p)) pages.set(p, str(anch(c).chapter) || p);
    });
    Array.from(pages.keys()).sort().forEach((p) => {
      page.appendChild(h('option', { value: p, text: pages.get(p) }));
    });
    const count = h('span', { class: 'nb-shown', 'aria-live': 'polite' });
    root.appendChild(h('div', { class: 'nb-view-filters' },
      h('label', { class: 'nb-field' }, h('span', { text: t('search') }), search),
      h('label', { class: 'nb-field' }, h('span', { text: t('status') }), status),
      h('label', { class: 'nb-field' }, h('span', { text: t('hold') }), hold),
      h('label', { class: 'nb-field' }, h('span', { text: t('page') }), page),
      count));
    const others = obj(data.otherLanguages);
    const langs = Object.keys(others).sort();
    if (langs.length) {
      const n = langs.reduce((sum, l) => sum + num(others[l], 0), 0);
      root.appendChild(h('p', {
        class: 'nb-other-languages',
        text: tn('otherLanguages', n, { langs: langs.map((l) => `${l}: ${num(others[l], 0)}`).join(', ') })
      }));
    }
    const list = h('ol', { class: 'nb-rows' });
    const empty = h('p', { class: 'nb-empty', text: t('noMatch'), hidden: true });
    root.appendChild(list);
    root.appendChild(empty);
    const rows = all.map((c) => ({ c, el: commentRow(c), hay: haystack(c) }));
    const apply = () => {
      const q = search.value.trim().toLowerCase();
      const st = status.value, hd = hold.value, pg = page.value;
      let shown = 0;
      list.textContent = '';
      rows.forEach((r) => {
        const s = statusOf(r.c);
        const ok = (!q || r.hay.includes(q)) &&
          (st === 'all' || (st === 'active' ? s !== 'resolved' : s === st)) &&
          (hd === 'all' || (hd === 'held') === (r.c.hold === true)) &&
          (!pg || str(r.c.page) === pg);
        if (ok) {
          list.appendChild(r.el);
          shown++;
        }
      });
      count.textContent = t('shown', { shown, total: all.length });
      empty.hidden = shown > 0;
    };
    [search, status, hold, page].forEach((el) => {
      el.addEventListener('input', apply);
      el.addEventListener('change', apply);
    });
    app.appendChild(root);
    apply();
  }

  function haystack(c) {
    const a = obj(c.anchor);
    const parts = [str(c.page), str(anch(c).chapter), str(a.quote), str(a.label)];
    arr(c.thread).forEach((m) => { parts.push(str(obj(m).body)); });
    return parts.join('\n').toLowerCase();
  }

  function commentRow(c) {
    const status = statusOf(c);
    const fm = firstMessage(c);
    // A resolved thread comes as its first message and the number of replies (it is on its page).
    const n = arr(c.thread).length + num(c.replies, 0);
    const url = siteHref(c.url || anch(c).url);
    const li = h('li', { class: `nb-row${c.hold === true ? ' nb-held' : ''}`, 'data-nb-id': str(c.id), 'data-nb-status': status });
    li.appendChild(h('div', { class: 'nb-row-head' },
      h('span', { class: 'nb-dot', 'data-nb-status': status, title: statusLabel(status) }),
      pageRef(url, anch(c).chapter, c.page, 'nb-row-page'),
      headEl(c, 60, 50),
      c.hold === true ? h('span', { class: 'nb-hold', text: `⏸ ${t('onHold')}` }) : null,
      n > 1 ? h('span', { class: 'nb-replies', text: repliesText(n - 1) }) : null,
      h('span', { class: 'nb-status-text', text: statusLabel(status) })));
    li.appendChild(h('p', { class: 'nb-row-first' },
      h('span', { class: 'nb-author', title: str(fm.author) || null, text: displayName(fm.author) }), ': ',
      h('span', { class: 'nb-body', text: str(fm.body) })));
    const changed = changedNote(c);
    if (changed) li.appendChild(changed);
    const same = sameTextNote(c);
    if (same) li.appendChild(same);
    const res = obj(c.resolution);
    if (res.note) {
      li.appendChild(h('p', { class: 'nb-resolution' },
        h('span', { class: 'nb-resolution-label', text: resolutionLabel(c) }),
        str(res.note)));
    }
    if (c.updatedAt) {
      li.appendChild(h('p', { class: 'nb-row-date' },
        h('time', { datetime: str(c.updatedAt), text: t('updated', { date: fmtTs(c.updatedAt) }) })));
    }
    return li;
  }

  /* ----- journal view */

  function renderJournal(app, data) {
    const entries = arr(data.entries).filter((e) => e && typeof e === 'object');
    const root = h('div', { class: 'nb-journal' });
    if (!entries.length) root.appendChild(h('p', { class: 'nb-empty', text: t('emptyJournal') }));
    entries.forEach((e) => {
      const art = h('article', { class: 'nb-j-entry', 'data-nb-entry': str(e.id), id: e.id ? `nb-j-${str(e.id)}` : null });
      art.appendChild(h('div', { class: 'nb-j-head' },
        e.date ? h('time', { class: 'nb-j-date', datetime: str(e.date), text: fmtDay(e.date) }) : null,
        h('span', { class: 'nb-j-title', role: 'heading', 'aria-level': '3', text: str(e.title) || str(e.id) })));
      if (e.summary) art.appendChild(h('p', { class: 'nb-j-summary', text: str(e.summary) }));
      const changes = arr(e.changes);
      if (changes.length) {
        const ul = h('ul', { class: 'nb-j-changes' });
        changes.forEach((ch) => {
          ch = obj(ch);
          const url = siteHref(ch.url);
          const li = h('li', { class: 'nb-j-change' },
            pageRef(url, ch.chapter, ch.page),
            ch.what ? ` — ${str(ch.what)}` : '');
          if (ch.why) li.appendChild(h('div', { class: 'nb-why', text: str(ch.why) }));
          const ids = arr(ch.commentIds).map(str).filter(Boolean);
          if (ids.length) {
            const p = h('div', { class: 'nb-j-ids' }, t('commentIds'));
            ids.forEach((id, i) => {
              if (i) p.appendChild(D.createTextNode(', '));
              p.appendChild(url ? h('a', { href: withParam(url, 'nb', id), text: id }) : h('code', { text: id }));
            });
            li.appendChild(p);
          }
          ul.appendChild(li);
        });
        art.appendChild(ul);
      }
      root.appendChild(art);
    });
    app.appendChild(root);
  }

  /** The comment of a card or a suggestion on /review, by id. */
  function reviewComment(id) {
    return reviewComments.get(id);
  }

  return { initView, reviewComment, viewHeader };
})();
