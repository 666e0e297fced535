/* Print — comments on paper: each anchored comment becomes a numbered note beside its text
 * (after the paragraph, list item, table or code block that holds its mark), with its status
 * and whole thread; the chapter's page, block, resolved and detached comments are listed at
 * the end of the chapter. Drawn on print.html when the book sets `print-comments = true`,
 * and on a chapter by the panel's "Print with comments" (taken away after printing). All of
 * it is text nodes: a comment never becomes markup. Uses: Locale, Dom, Paint (the chapter's data). */

/* exported Print */
const Print = (() => {
  const D = document;
  const HTML = document.documentElement;
  const { t, tn } = Locale;
  const { anch, arr, displayName, fmtTs, h, obj, scopeOf, statusLabel, statusOf, str } = Dom;
  const { codeOf, comments, islandOf, islands, marksOf, summary } = Paint;

  /** The element a note goes after: the block of the chapter that holds `el`. */
  const BLOCKS = 'li, p, pre, table, blockquote, dd, dt, h1, h2, h3, h4, h5, h6, figure';
  function blockOf(el) {
    const b = el.closest(BLOCKS);
    return b && b.closest('main') ? b : null;
  }

  /** What a comment is on, in a few words: its quote, its block's label, or "the page". */
  function subject(c) {
    const a = obj(c.anchor);
    const scope = scopeOf(c);
    if (scope === 'page') return t('pageTag');
    if (scope === 'block') return str(a.label) || str(a.key);
    return `“${str(a.quote) || str(anch(c).text)}”`;
  }

  /** One note: its number, status and subject, then every message, then the resolution. */
  function note(c, n) {
    const status = statusOf(c);
    const li = h('li', { class: 'nb-print-note', value: String(n), 'data-nb-id': str(c.id), 'data-nb-status': status });
    li.appendChild(h('p', { class: 'nb-print-head' },
      h('span', { class: 'nb-print-n', text: String(n) }),
      h('span', { class: 'nb-print-status', text: statusLabel(status) + (c.hold === true ? ` · ${t('held')}` : '') }),
      h('span', { class: 'nb-print-subject', text: subject(c) })));
    arr(c.thread).forEach((m) => {
      m = obj(m);
      li.appendChild(h('p', { class: 'nb-print-msg' },
        h('span', { class: 'nb-print-who', text: `${displayName(m.author)}${m.ts ? ` · ${fmtTs(m.ts)}` : ''}: ` }),
        h('span', { class: 'nb-print-body', text: str(m.body) })));
    });
    const r = obj(c.resolution);
    if (str(r.note)) li.appendChild(h('p', { class: 'nb-print-msg nb-print-resolution', text: t('resolution') + str(r.note) }));
    return li;
  }

  let drawn = false;

  /** Draws the notes of every chapter on the page (once). */
  function draw() {
    if (drawn) return;
    drawn = true;
    HTML.classList.add('nb-print-comments');
    islands().forEach((isl) => {
      const beside = [];
      const rest = [];
      comments().forEach((c) => {
        const id = str(c.id);
        if (islandOf(id) !== isl.el) return;
        const marks = marksOf(id);
        const ce = codeOf(id);
        const at = marks[0] || (ce && ce.code.parentElement);
        const block = at && statusOf(c) !== 'resolved' ? blockOf(at) : null;
        if (block) beside.push({ c, marks, block });
        else rest.push(c);
      });
      beside.sort((a, b) => {
        const x = a.marks[0] || a.block;
        const y = b.marks[0] || b.block;
        return x === y ? 0 : (x.compareDocumentPosition(y) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1);
      });
      const lists = new Map();
      let n = 0;
      beside.forEach((b) => {
        n++;
        // One number per comment, after its last piece.
        const last = b.marks[b.marks.length - 1];
        if (last && !last.hasAttribute('data-nb-note')) last.setAttribute('data-nb-note', String(n));
        let ol = lists.get(b.block);
        if (!ol) {
          ol = h('ol', { class: 'nb-print-notes', 'data-nb-ui': '', 'aria-label': t('printNotes') });
          // A list item keeps its notes inside it; any other block has them right after it.
          if (b.block.localName === 'li') b.block.appendChild(ol);
          else b.block.parentNode.insertBefore(ol, b.block.nextSibling);
          lists.set(b.block, ol);
        }
        ol.appendChild(note(b.c, n));
      });
      if (!rest.length) return;
      const ol = h('ol', { class: 'nb-print-notes nb-print-rest', start: String(n + 1) });
      rest.forEach((c) => { ol.appendChild(note(c, ++n)); });
      isl.el.parentNode.insertBefore(h('section', { class: 'nb-print-end', 'data-nb-ui': '' },
        h('p', { class: 'nb-print-end-title', text: tn('printOther', rest.length) }), ol), isl.el);
    });
  }

  /** Takes the notes away again (after "Print with comments" on a chapter). */
  function undraw() {
    if (!drawn) return;
    drawn = false;
    HTML.classList.remove('nb-print-comments');
    D.querySelectorAll('.nb-print-notes, .nb-print-end').forEach((el) => { el.remove(); });
    D.querySelectorAll('mark[data-nb-note]').forEach((m) => { m.removeAttribute('data-nb-note'); });
  }

  /** The panel's "Print with comments": the notes drawn, the print dialog, the notes gone. */
  function printWithComments() {
    const had = drawn;
    draw();
    if (!had) window.addEventListener('afterprint', undraw, { once: true });
    window.print();
  }

  /** print.html of a book with `print-comments = true` carries the notes from the start. */
  function setup() {
    const printPage = /\/print\.html$/.test(location.pathname) || islands().length > 1;
    if (summary() && summary().print === true && printPage) draw();
  }

  return { draw, printWithComments, setup, undraw };
})();
