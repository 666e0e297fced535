/* Words — changes word by word: Unicode word segmentation (Intl.Segmenter; CJK one
 * character at a time), a longest common subsequence of the words of two texts, and the nodes
 * that show it — `<del class="nb-word">` and `<ins class="nb-word">` around the changed words,
 * every text through textContent. Used by /review's diffs, by suggested edits and by the
 * "text changed" note of a thread. Uses: Dom. */

/* exported Words */
const Words = (() => {
  const D = document;
  const { h, str } = Dom;

  /* ------------------------------------------------------------ word diffs */

  let WORD_SEGMENTER = null;
  const CJK = /[\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]/;
  const MAX_WORD_CELLS = 250000; // above this, the changed middle of two texts is one change

  /** The words, spaces and punctuation of `s`, in order; joined they give `s` back. */
  function wordTokens(s) {
    const out = [];
    const push = (tok) => {
      if (tok.length > 1 && CJK.test(tok)) out.push(...tok);
      else out.push(tok);
    };
    s = str(s);
    if (typeof Intl === 'object' && typeof Intl.Segmenter === 'function') {
      if (!WORD_SEGMENTER) WORD_SEGMENTER = new Intl.Segmenter(undefined, { granularity: 'word' });
      for (let it = WORD_SEGMENTER.segment(s)[Symbol.iterator](), n = it.next(); !n.done; n = it.next()) {
        push(n.value.segment);
      }
    } else {
      (s.match(/\s+|[\p{L}\p{M}\p{N}_]+|[^\s\p{L}\p{M}\p{N}_]/gu) || []).forEach(push);
    }
    return out;
  }

  /**
   * The changes from text `a` to text `b` as ops `{t: 'eq' | 'del' | 'ins', s}`, in order. A
   * change is one `del` then one `ins` (either may be missing); a lone space between two changed
   * words belongs to the change, so "the quick" → "a slow" is one change, not two.
   */
  function wordDiff(a, b) {
    const x = wordTokens(a), y = wordTokens(b);
    let p = 0;
    while (p < x.length && p < y.length && x[p] === y[p]) p++;
    let q = 0;
    while (q < x.length - p && q < y.length - p && x[x.length - 1 - q] === y[y.length - 1 - q]) q++;
    const xm = x.slice(p, x.length - q), ym = y.slice(p, y.length - q);
    const raw = [];
    const add = (t, s) => { if (s) raw.push({ t, s }); };
    add('eq', x.slice(0, p).join(''));
    if (xm.length && ym.length && xm.length * ym.length <= MAX_WORD_CELLS) {
      // len[i][j]: the length of a longest common subsequence of xm[i..] and ym[j..].
      const w = ym.length + 1;
      const len = new Uint32Array((xm.length + 1) * w);
      for (let i = xm.length - 1; i >= 0; i--) {
        for (let j = ym.length - 1; j >= 0; j--) {
          len[i * w + j] = xm[i] === ym[j] ? len[(i + 1) * w + j + 1] + 1 : Math.max(len[(i + 1) * w + j], len[i * w + j + 1]);
        }
      }
      let a0 = 0, b0 = 0;
      while (a0 < xm.length || b0 < ym.length) {
        if (a0 < xm.length && b0 < ym.length && xm[a0] === ym[b0]) { add('eq', xm[a0]); a0++; b0++; }
        else if (b0 >= ym.length || (a0 < xm.length && len[(a0 + 1) * w + b0] >= len[a0 * w + b0 + 1])) { add('del', xm[a0]); a0++; }
        else { add('ins', ym[b0]); b0++; }
      }
    } else {
      add('del', xm.join(''));
      add('ins', ym.join(''));
    }
    add('eq', x.slice(x.length - q).join(''));
    // A space alone between two changes joins them.
    for (let k = 1; k + 1 < raw.length; k++) {
      if (raw[k].t === 'eq' && /^\s+$/.test(raw[k].s) && raw[k - 1].t !== 'eq' && raw[k + 1].t !== 'eq') raw[k].t = 'both';
    }
    // Each run of changes becomes one del and one ins.
    const out = [];
    let del = '', ins = '';
    const flush = () => {
      if (del) out.push({ t: 'del', s: del });
      if (ins) out.push({ t: 'ins', s: ins });
      del = ins = '';
    };
    raw.forEach((o) => {
      if (o.t === 'eq') {
        flush();
        if (out.length && out[out.length - 1].t === 'eq') out[out.length - 1].s += o.s;
        else out.push({ t: 'eq', s: o.s });
      } else {
        if (o.t !== 'ins') del += o.s;
        if (o.t !== 'del') ins += o.s;
      }
    });
    flush();
    return out;
  }

  /**
   * Appends `ops` to `el`: unchanged text as text, removed words in `<del class="nb-word">`,
   * added ones in `<ins class="nb-word">`. `side` 'old' shows only what `a` had, 'new' only
   * what `b` has, anything else both (a merged view).
   */
  function appendWords(el, ops, side) {
    ops.forEach((o) => {
      if (o.t === 'eq') el.appendChild(D.createTextNode(o.s));
      else if (o.t === 'del' && side !== 'new') el.appendChild(h('del', { class: 'nb-word', text: o.s }));
      else if (o.t === 'ins' && side !== 'old') el.appendChild(h('ins', { class: 'nb-word', text: o.s }));
    });
    return el;
  }

  return { appendWords, wordDiff };
})();
