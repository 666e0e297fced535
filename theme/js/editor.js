/* Editor — the in-page editor, under serve and, for maintainers, the review server: a ✎
 * button before each top-level block of the chapter that the server's `GET page` names (found
 * by its text), which opens the block's Markdown source in place with a preview the server
 * renders with the build's Markdown engine. Ctrl/Cmd+Enter saves, Escape cancels. Saving
 * first asks which of the page's open comments the edit answers (those marked in the block
 * first) with a one-line description, then sends one `PUT page`; the server closes them and
 * journals the change, and the rebuild reloads the page where it was. Images pasted or dropped
 * into the source go through `POST asset`. The preview is the server's HTML kept to a short
 * list of elements and attributes: it never runs anything. Uses: Locale, Dom, TextModel,
 * Paint, Live. */

/* exported Editor */
const Editor = (() => {
  const { t } = Locale;
  const { h, obj, arr, scopeOf, statusOf, str, anch } = Dom;
  const { mainEl } = TextModel;
  const { comments, marksOf } = Paint;
  const { api, rightsOver, toast } = Live;

  // Owned here: the page edited, its blocks as the server sent them, the editor open.
  const state = { page: '', blocks: [], open: null };

  const norm = (s) => str(s).replace(/\s+/g, '');

  /** The chapter's top-level elements, each matched in order to a source block by its text. */
  function matchBlocks(blocks) {
    const main = mainEl();
    if (!main) return [];
    const els = [...main.children].filter((el) =>
      !el.matches('script, style, .nb-ui, [data-nb-ui], .nb-edit-btn') && norm(el.textContent));
    const out = [];
    let from = 0;
    blocks.forEach((b) => {
      const want = norm(b.text);
      if (!want) return;
      for (let j = from; j < els.length; j++) {
        if (norm(els[j].textContent) === want) {
          out.push({ block: b, el: els[j] });
          from = j + 1;
          return;
        }
      }
    });
    return out;
  }

  /* ----- the preview, kept to plain document elements */

  const ELEMENTS = new Set(['a', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5',
    'h6', 'hr', 'img', 'li', 'ol', 'p', 'pre', 'strong', 'sup', 'table', 'tbody', 'td', 'th', 'thead',
    'tr', 'ul', 'input', 'dl', 'dt', 'dd', 'span', 'div', 'section']);
  const ATTRIBUTES = new Set(['href', 'src', 'alt', 'title', 'class', 'align', 'type', 'checked', 'disabled', 'start']);

  /** The nodes of `html` (the server's preview) with any other element unwrapped, any other
   * attribute dropped, and a link or image left only with a web, mail or relative address. */
  function cleanPreview(html) {
    const doc = new DOMParser().parseFromString(`<body>${html}</body>`, 'text/html');
    const walk = (node) => {
      [...node.children].forEach((el) => {
        walk(el);
        const name = el.localName;
        if (!ELEMENTS.has(name)) {
          el.replaceWith(...el.childNodes);
          return;
        }
        [...el.attributes].forEach((a) => {
          const ok = ATTRIBUTES.has(a.name) &&
            (!['href', 'src'].includes(a.name) || !/^\s*[a-z][a-z0-9+.-]*:/i.test(a.value) ||
              /^\s*(https?|mailto):/i.test(a.value));
          if (!ok) el.removeAttribute(a.name);
        });
        if (name === 'input') el.setAttribute('disabled', '');
      });
    };
    walk(doc.body);
    return [...doc.body.childNodes];
  }

  /* ----- the editor */

  /** The page's open comments, those marked in (or on) `el` first. */
  function openComments(el) {
    const live = comments().filter((c) => statusOf(c) !== 'resolved');
    const inBlock = (c) => marksOf(str(c.id)).some((m) => el.contains(m)) ||
      (scopeOf(c) === 'selection' && norm(el.textContent).includes(norm(obj(c.anchor).quote)) && norm(obj(c.anchor).quote));
    return [...live.filter(inBlock), ...live.filter((c) => !inBlock(c))];
  }

  function subject(c) {
    if (scopeOf(c) === 'page') return t('pageTag');
    const a = obj(c.anchor);
    return `“${str(a.quote) || str(a.label) || str(anch(c).text)}”`;
  }

  function close() {
    const o = state.open;
    if (!o) return;
    state.open = null;
    o.panel.remove();
    o.el.hidden = false;
    o.button.hidden = false;
    o.button.focus();
  }

  async function showPreview(o) {
    const seq = ++o.previewSeq;
    try {
      const d = obj(await api('POST', 'preview', { markdown: o.src.value }));
      if (seq !== o.previewSeq || state.open !== o) return;
      o.preview.replaceChildren(...cleanPreview(str(d.html)));
    } catch (e) {
      if (seq === o.previewSeq) o.preview.replaceChildren(h('p', { class: 'nb-editor-note', text: str(e.message) }));
    }
  }

  /** The card of the comments the edit may answer, shown once before the save. */
  function showCard(o) {
    const list = openComments(o.el);
    if (!list.length) return false;
    o.card.replaceChildren(h('p', { class: 'nb-editor-card-title', text: t('editCloseTitle') }));
    list.forEach((c) => {
      const box = h('input', { type: 'checkbox', value: str(c.id), class: 'nb-editor-tick' });
      const first = obj(arr(c.thread)[0]);
      o.card.appendChild(h('label', { class: 'nb-editor-item' }, box,
        h('span', { class: 'nb-editor-subject', text: ` ${subject(c)} ` }),
        h('span', { class: 'nb-editor-body', text: str(first.body) })));
    });
    o.note = h('input', { type: 'text', class: 'nb-editor-desc', maxlength: '500', 'aria-label': t('editDescription'), placeholder: t('editDescription') });
    o.card.appendChild(o.note);
    o.card.hidden = false;
    o.carded = true;
    return true;
  }

  async function save(o) {
    if (o.src.value === o.block.markdown) {
      close();
      return;
    }
    if (!o.carded && showCard(o)) {
      o.save.textContent = t('editSaveAndClose');
      o.card.querySelector('input')?.focus();
      return;
    }
    const close_ = [...o.card.querySelectorAll('.nb-editor-tick:checked')].map((b) => b.value);
    const body = { page: state.page, block: o.block.id, expected: o.block.markdown, markdown: o.src.value };
    if (close_.length) {
      body.close = close_;
      body.note = str(o.note?.value).replace(/\s+/g, ' ').trim();
    }
    o.save.disabled = true;
    try {
      const d = obj(await api('PUT', 'page', body));
      state.blocks = arr(d.blocks);
      o.error.hidden = true;
      toast(close_.length ? t('editSavedClosed', { n: close_.length }) : t('editSaved'));
      o.saved = true;
    } catch (e) {
      const current = obj(obj(e.data).current);
      if (e.status === 409 && typeof current.markdown === 'string') {
        o.block = { ...o.block, markdown: current.markdown };
        o.src.value = current.markdown;
      }
      o.error.textContent = str(e.message);
      o.error.hidden = false;
    } finally {
      o.save.disabled = false;
    }
  }

  /** Reads `file` (an image) as base64, without its data-URL head. */
  function base64Of(file) {
    return new Promise((resolve, reject) => {
      const r = new FileReader();
      r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ''));
      r.onerror = () => reject(r.error);
      r.readAsDataURL(file);
    });
  }

  async function addImages(o, files) {
    for (const file of files) {
      try {
        const d = obj(await api('POST', 'asset', { page: state.page, filename: file.name, data: await base64Of(file) }));
        const at = o.src.selectionStart;
        o.src.setRangeText(str(d.markdown), at, o.src.selectionEnd, 'end');
        showPreview(o);
      } catch (e) {
        o.error.textContent = str(e.message);
        o.error.hidden = false;
      }
    }
  }

  function open(entry, button) {
    if (state.open) close();
    const { block, el } = entry;
    const src = h('textarea', { class: 'nb-editor-src', rows: String(Math.min(20, block.markdown.split('\n').length + 2)),
      'aria-label': t('editSource'), spellcheck: 'true' });
    src.value = block.markdown;
    const preview = h('div', { class: 'nb-editor-preview', 'aria-label': t('editPreview') });
    const card = h('div', { class: 'nb-editor-card', hidden: true });
    const error = h('p', { class: 'nb-editor-error', role: 'alert', hidden: true });
    const saveB = h('button', { type: 'button', class: 'nb-btn nb-primary nb-editor-save', text: t('editSave') });
    const cancelB = h('button', { type: 'button', class: 'nb-btn nb-editor-cancel', text: t('cancel') });
    const panel = h('div', { class: 'nb-editor nb-ui', 'data-nb-ui': '', role: 'group', 'aria-label': t('editBlock') },
      src, h('p', { class: 'nb-editor-hint', text: t('editHint') }), preview, card, error,
      h('div', { class: 'nb-editor-actions' }, saveB, cancelB));
    const o = { block, el, button, panel, src, preview, card, error, save: saveB, previewSeq: 0, carded: false, note: null };
    state.open = o;
    el.hidden = true;
    button.hidden = true;
    el.parentNode.insertBefore(panel, el.nextSibling);
    let timer = 0;
    src.addEventListener('input', () => {
      window.clearTimeout(timer);
      timer = window.setTimeout(() => { showPreview(o); }, 250);
    });
    panel.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        close();
      } else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        save(o);
      }
    });
    src.addEventListener('paste', (e) => {
      const files = [...(e.clipboardData?.files || [])].filter((f) => /^image\//.test(f.type));
      if (!files.length) return;
      e.preventDefault();
      addImages(o, files);
    });
    src.addEventListener('drop', (e) => {
      const files = [...(e.dataTransfer?.files || [])].filter((f) => /^image\//.test(f.type));
      if (!files.length) return;
      e.preventDefault();
      addImages(o, files);
    });
    saveB.addEventListener('click', () => { save(o); });
    cancelB.addEventListener('click', close);
    showPreview(o);
    src.focus();
  }

  /** Puts a ✎ before each block of the chapter the server knows; opens the one `?edit=1`
   * names through its comment (`?nb=ID`), as /review's "Fix in page" asks. */
  async function setup(target) {
    // Said on the page once known, for the browser tests: `on` (✎ shown) or `off`.
    const said = (v) => { document.documentElement.dataset.nbEditor = v; };
    if (!rightsOver(null).decide || !mainEl()) {
      said('off');
      return;
    }
    let d;
    try {
      d = obj(await api('GET', `page?page=${encodeURIComponent(target.page)}`));
    } catch {
      said('off'); // not a chapter the editor can take, or not this reader's to edit
      return;
    }
    state.page = target.page;
    state.blocks = arr(d.blocks);
    const entries = matchBlocks(state.blocks);
    entries.forEach((entry) => {
      const b = h('button', { type: 'button', class: 'nb-edit-btn', 'data-nb-ui': '', 'data-nb-block': entry.block.id,
        'aria-label': t('editBlock'), title: t('editBlock'), text: '✎' });
      b.addEventListener('click', () => { open(entry, b); });
      entry.el.parentNode.insertBefore(b, entry.el);
    });
    said('on');
    const q = new URLSearchParams(location.search);
    const id = q.get('nb') || q.get('c');
    if (q.get('edit') === '1' && id) {
      const mark = marksOf(id)[0];
      const entry = mark && entries.find((e) => e.el.contains(mark));
      const button = entry && entry.el.previousElementSibling;
      if (entry && button) open(entry, button);
    }
  }

  return { cleanPreview, setup };
})();
