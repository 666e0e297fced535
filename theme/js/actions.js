/* Actions — comments on blocks (images, diagrams) and on the page, and the thread actions:
 * reply, edit, resolve, reopen, hold, delete, and Apply on a suggested edit, each result shown
 * as the server returned it. Uses: Locale, Dom, TextModel, Paint, Live, Panel, Compose. */

/* exported Actions */
const Actions = (() => {
  const D = document;
  const { t } = Locale;
  const { arr, cssEscape, firstMessage, h, num, obj, saveHint, statusOf, str, truncate } = Dom;
  const { inUI, mainEl } = TextModel;
  const { replaceComment } = Paint;
  const { api, busy, didSomething, maybeReload, rightsOver, showError, withAuthor, wroteSomething } = Live;
  const { renderThread, threadOptsOf } = Thread;
  const { discussionSection } = Panel;
  const { openComposer } = Compose;

  /* ----- blocks: images and diagrams */

  function djb2(s) {
    let x = 5381;
    for (let i = 0; i < s.length; i++) x = (Math.imul(x, 33) + s.charCodeAt(i)) | 0;
    return (x >>> 0).toString(36);
  }
  /** The chapter's commentable blocks in document order: each Markdown image once, each diagram. */
  function domBlocks(main) {
    const out = [];
    main.querySelectorAll('pre.mermaid, img').forEach((el) => {
      if (inUI(el)) return;
      if (el.localName === 'img') {
        if (el.closest('pre.mermaid, script')) return;
        // mdBook renders an image twice (the second copy is its zoom view): count it once.
        const label = el.closest('label.checkbox-label');
        if (label && label.querySelector('img') !== el) return;
        out.push({ el, kind: 'image', key: `image:${str(el.getAttribute('src'))}`, host: el.closest('span.nb-block') || label || el });
      } else {
        const src = el.getAttribute('data-nb-src') || el.textContent || '';
        const p = el.parentElement;
        out.push({
          el,
          kind: 'mermaid',
          key: el.getAttribute('data-nb-key') || `mermaid:${djb2(src.trim())}`,
          host: p && p.classList.contains('nb-block-wrap') ? p : el
        });
      }
    });
    return out;
  }
  /** Pairs DOM blocks with the island's `blocks`: by position when the shapes agree, else by key. */
  function mapBlocks(dom, entries) {
    entries = entries.map(obj);
    const same = dom.length === entries.length && dom.every((d, i) => entries[i].kind === d.kind);
    if (same) return dom.map((d, i) => ({ dom: d, entry: entries[i] }));
    const used = new Set();
    const pairs = [];
    dom.forEach((d) => {
      for (let i = 0; i < entries.length; i++) {
        if (!used.has(i) && entries[i].key === d.key) {
          used.add(i);
          pairs.push({ dom: d, entry: entries[i] });
          return;
        }
      }
    });
    return pairs;
  }
  function blockHost(d) {
    const host = d.host;
    if (host.classList.contains('nb-block') || host.classList.contains('nb-block-wrap')) return host;
    const wrap = d.kind === 'mermaid' ? h('div', { class: 'nb-block-wrap' }) : h('span', { class: 'nb-block-auto' });
    host.parentNode.insertBefore(wrap, host);
    wrap.appendChild(host);
    return wrap;
  }
  /** The comment buttons on the chapter's images and diagrams (`entries`: the island's
   * blocks); their comments go to `target` (`{page, space}`). */
  function setupBlockTools(entries, target) {
    const main = mainEl();
    mapBlocks(domBlocks(main), entries).forEach((p) => {
      const host = blockHost(p.dom);
      const entry = p.entry;
      const kind = t(p.dom.kind === 'mermaid' ? 'kDiagram' : 'kImage');
      const label = t('commentOn', { kind });
      const b = h('button', {
        type: 'button',
        class: 'nb-block-add',
        'data-nb-ui': '',
        'data-nb-block-index': String(num(entry.index, -1)),
        'aria-label': label + (entry.label ? ` — ${str(entry.label)}` : ''),
        title: label
      });
      b.addEventListener('click', (e) => {
        e.preventDefault();
        e.stopPropagation();
        composeBlock(entry, host, b, target);
      });
      host.classList.add('nb-block-host');
      // One toolbar in the block's corner: the comment button, then the reader's badge.
      const tools = h('span', { class: 'nb-block-tools', 'data-nb-ui': '' }, b);
      const existing = host.querySelector(':scope > .nb-badge');
      if (existing) tools.appendChild(existing);
      host.appendChild(tools);
    });
  }
  function composeBlock(entry, host, opener, target) {
    const anchor = {
      kind: str(entry.kind),
      key: str(entry.key),
      label: str(entry.label),
      section: entry.section === null || entry.section === undefined ? null : str(entry.section),
      index: num(entry.index, 0)
    };
    openComposer({
      icon: anchor.kind === 'mermaid' ? '📊' : '🖼',
      preview: (anchor.kind === 'mermaid' ? '📊 ' : '🖼 ') + truncate(anchor.label || anchor.key, 70),
      rect() { return host.getBoundingClientRect(); },
      opener,
      payload(body, author) {
        return { page: target.page, space: target.space, scope: 'block', anchor, author, body };
      }
    });
  }

  /* ----- page discussion composer */

  /** The page discussion's composer (under island `isl`); its comments go to `target`
   * (`{page, space}`). */
  function setupPageComposer(isl, target) {
    const section = discussionSection(isl);
    const ta = h('textarea', {
      class: 'nb-input nb-page-body',
      rows: '3',
      placeholder: t('discussionPlaceholder'),
      'aria-label': t('discussionPlaceholder'),
      'data-nb-draft': ''
    });
    const send = h('button', { type: 'button', class: 'nb-btn nb-primary nb-page-send', text: t('commentVerb') });
    const err = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    section.appendChild(h('div', { class: 'nb-composer' },
      ta,
      err,
      h('div', { class: 'nb-form-actions' }, saveHint('span'), send)));
    const submit = () => {
      const body = ta.value.trim();
      if (!body) {
        showError(err, t('emptyBody'));
        ta.focus();
        return;
      }
      withAuthor(async (author) => {
        busy([send], true);
        showError(err, null);
        try {
          await api('POST', 'comments', { page: target.page, space: target.space, scope: 'page', anchor: null, author, body });
        } catch (e) {
          busy([send], false);
          showError(err, e);
          return;
        }
        ta.value = '';
        busy([send], false);
        wroteSomething();
      }, ta);
    };
    send.addEventListener('click', submit);
    ta.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        submit();
      }
    });
  }

  /* ----- thread actions */

  function threadActions(c) {
    const id = str(c.id);
    const page = str(c.page);
    const status = statusOf(c);
    const box = h('div', { class: 'nb-actions' });
    const bar = h('div', { class: 'nb-actions-bar' });
    const forms = h('div', { class: 'nb-actions-forms' });
    const msg = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    box.appendChild(bar);
    box.appendChild(forms);
    box.appendChild(msg);
    const button = (cls, label, fn) => {
      const b = h('button', { type: 'button', class: `nb-act ${cls}`, text: label });
      b.addEventListener('click', (e) => {
        e.preventDefault();
        e.stopPropagation();
        fn(b);
      });
      bar.appendChild(b);
      return b;
    };
    const patch = (fields, opener) => {
      withAuthor(async (author) => {
        fields.page = page;
        fields.id = id;
        fields.author = author;
        if (fields.reply) fields.reply.author = author;
        const buttons = box.querySelectorAll('button');
        busy(buttons, true);
        showError(msg, null);
        let updated;
        try {
          updated = await api('PATCH', 'comments', fields);
        } catch (e) {
          busy(buttons, false);
          showError(msg, e);
          return;
        }
        forms.textContent = '';
        replaceThread(obj(updated).id ? updated : c);
        didSomething(done(fields, obj(updated)));
      }, opener);
    };
    // What a PATCH did, for the toast, and how to take it back (resolve and hold only: a reply
    // or an edit is undone by writing again).
    const done = (fields, updated) => {
      const back = { page, id, updatedAt: str(updated.updatedAt) };
      if (fields.reply) return { text: t('didReply'), id, undo: null };
      if (fields.edit) return { text: t('didEdit'), id, undo: null };
      if (fields.status === 'resolved') return { text: t('didResolve'), id, undo: back };
      if (fields.status === 'open') return { text: t('didReopen'), id, undo: null };
      return { text: fields.hold ? t('didHold') : t('didUnhold'), id, undo: back };
    };
    const form = (kind, initial, placeholder, submitLabel, onSubmit) => {
      forms.textContent = '';
      showError(msg, null);
      const ta = h('textarea', { class: `nb-input nb-${kind}-body`, rows: '3', placeholder, 'aria-label': placeholder, 'data-nb-draft': '' });
      ta.value = initial;
      const ok = h('button', { type: 'button', class: `nb-btn nb-primary nb-${kind}-send`, text: submitLabel });
      const no = h('button', { type: 'button', class: `nb-btn nb-${kind}-cancel`, text: t('cancel') });
      const submit = () => {
        const body = ta.value.trim();
        if (!body) {
          showError(msg, t('emptyBody'));
          ta.focus();
          return;
        }
        onSubmit(body, ok);
      };
      ok.addEventListener('click', submit);
      no.addEventListener('click', () => {
        ta.value = '';
        forms.textContent = '';
        showError(msg, null);
        maybeReload();
      });
      ta.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          submit();
        } else if (e.key === 'Escape') {
          e.preventDefault();
          e.stopPropagation();
          no.click();
        }
      });
      forms.appendChild(h('div', { class: `nb-form nb-form-${kind}` }, ta, h('div', { class: 'nb-form-actions' }, no, ok)));
      ta.focus();
    };
    button('nb-act-reply', t('reply'), () => {
      form('reply', '', t('replyPlaceholder'), t('send'), (body, b) => { patch({ reply: { body } }, b); });
    });
    // Under the hub, what the sign-in allows: the server refuses the rest anyway.
    const may = rightsOver(c);
    if (status === 'open' && arr(c.thread).length === 1 && may.own) {
      button('nb-act-edit', t('edit'), () => {
        form('edit', str(firstMessage(c).body), t('bodyPlaceholder'), t('save'), (body, b) => { patch({ edit: { body } }, b); });
      });
    }
    if (may.decide && status === 'open') button('nb-act-resolve', t('resolve'), (b) => { patch({ status: 'resolved' }, b); });
    else if (may.decide && status === 'resolved') button('nb-act-reopen', t('reopen'), (b) => { patch({ status: 'open' }, b); });
    if (may.decide) button('nb-act-hold', c.hold === true ? t('holdOff') : t('holdOn'), (b) => { patch({ hold: c.hold !== true }, b); });
    if (may.own) button('nb-act-delete', t('del'), () => {
      forms.textContent = '';
      showError(msg, null);
      const yes = h('button', { type: 'button', class: 'nb-btn nb-danger nb-delete-confirm', text: t('del') });
      const no = h('button', { type: 'button', class: 'nb-btn nb-delete-cancel', text: t('cancel') });
      no.addEventListener('click', () => { forms.textContent = ''; });
      yes.addEventListener('click', async () => {
        const buttons = box.querySelectorAll('button');
        busy(buttons, true);
        let answer;
        try {
          answer = await api('DELETE', 'comments', { page, id });
        } catch (e) {
          busy(buttons, false);
          showError(msg, e);
          return;
        }
        D.querySelectorAll(`.nb-thread[data-nb-id="${cssEscape(id)}"]`).forEach((wrap) => {
          wrap.classList.add('nb-deleted');
          const acts = wrap.querySelector(':scope > .nb-actions');
          if (acts) acts.remove();
          wrap.appendChild(h('p', { class: 'nb-note nb-deleted-note', role: 'status', text: t('deleted') }));
        });
        didSomething({ text: t('didDelete'), id, undo: obj(answer).undo === true ? { page, id } : null });
      });
      forms.appendChild(h('div', { class: 'nb-form nb-form-delete', role: 'group' },
        h('p', { class: 'nb-confirm-text', text: t('deleteConfirm') }),
        h('div', { class: 'nb-form-actions' }, no, yes)));
      no.focus();
    });
    return box;
  }

  /** The Apply button of a suggested edit (an open comment whose suggestion is not applied):
   * what `comments apply` does, then the page rebuilds with the new text. */
  function addApply(box, c) {
    const sg = obj(c.suggestion);
    if (sg.applied || statusOf(c) !== 'open' || !rightsOver(c).decide || box.querySelector('.nb-apply')) return;
    const b = h('button', { type: 'button', class: 'nb-btn nb-primary nb-apply', text: t('apply') });
    const msg = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    b.addEventListener('click', (e) => {
      e.preventDefault();
      e.stopPropagation();
      withAuthor(async (author) => {
        busy([b], true);
        showError(msg, null);
        let updated;
        try {
          updated = await api('POST', 'apply', { id: str(c.id), author });
        } catch (err) {
          busy([b], false);
          showError(msg, err);
          return;
        }
        replaceThread(obj(updated).id ? updated : c);
        didSomething({ text: t('appliedRebuilding'), id: str(c.id), undo: null });
      }, b);
    });
    box.appendChild(b);
    box.appendChild(msg);
  }

  /** Shows a comment as the server now has it, wherever its thread is on screen. */
  function replaceThread(c) {
    const id = str(c.id);
    replaceComment(c);
    D.querySelectorAll(`.nb-thread[data-nb-id="${cssEscape(id)}"]`).forEach((wrap) => {
      const fresh = renderThread(c, threadOptsOf(wrap));
      const focused = wrap.contains(D.activeElement);
      wrap.parentNode.replaceChild(fresh, wrap);
      if (focused) {
        const f = fresh.querySelector('.nb-actions button');
        if (f) f.focus();
      }
    });
  }

  return { addApply, setupBlockTools, setupPageComposer, threadActions };
})();
