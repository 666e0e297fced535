/* Dom — DOM and data helpers: type-safe readers of island JSON (plain, or deflated and
 * inflated once at start), lean-comment defaults, h() (every attribute through setAttribute,
 * every text through textContent), formatting of authors, dates and statuses, anchor heads,
 * safe site-relative links, CSS escaping, copying to the clipboard, safely() and warnings.
 * Uses: Locale. */

/* exported Dom */
const Dom = (() => {
  const D = document;
  const { LANG, ROOT, t } = Locale;

  /* --------------------------------------------------------------- helpers */

  function str(v) {
    return typeof v === 'string' ? v : (v === null || v === undefined ? '' : String(v));
  }
  function arr(v) {
    return Array.isArray(v) ? v : [];
  }
  function obj(v) {
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  }
  function num(v, dflt) {
    return typeof v === 'number' && isFinite(v) ? v : dflt;
  }
  /** Inflated text of deflated data scripts (`data-nb-encoding`), filled by inflateAll(). */
  const INFLATED = new Map();
  function readJSON(el) {
    if (!el) return null;
    const text = el.hasAttribute('data-nb-encoding') ? INFLATED.get(el) : el.textContent;
    if (text === undefined) return null;
    try {
      return JSON.parse(text || '');
    } catch (e) {
      warn('unreadable JSON island', e);
      return null;
    }
  }
  /**
   * Inflates every deflated data script of the page (a big book's islands and views:
   * raw DEFLATE in base64, `data-nb-encoding="deflate-raw+base64"`) with the browser's own
   * DecompressionStream — no network, and it works from file://. Resolves, when all are
   * read, to how many could not be (each warned and left out, like an unreadable plain island).
   */
  async function inflateAll() {
    const failed = (e) => { warn('unreadable deflated data', e); return 1; };
    const inflate = async (el) => {
      if (el.getAttribute('data-nb-encoding') !== 'deflate-raw+base64' || typeof DecompressionStream !== 'function') {
        return failed(el.getAttribute('data-nb-encoding'));
      }
      try {
        const bin = atob((el.textContent || '').trim());
        const bytes = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
        const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
        INFLATED.set(el, await new Response(stream).text());
        return 0;
      } catch (e) {
        return failed(e);
      }
    };
    const results = await Promise.all([...D.querySelectorAll('script[data-nb-encoding]')].map(inflate));
    return results.reduce((a, b) => a + b, 0);
  }
  /**
   * Restores the fields a lean comment (data island, /comments list) leaves out because they
   * hold their default or what the island already says: page, space, hold, resolution,
   * updatedAt. Returns the comment.
   */
  function unlean(c, data) {
    if (c.page === undefined && data.page !== undefined) c.page = str(data.page);
    if (c.space === undefined && data.space !== undefined) c.space = str(data.space);
    if (c.hold === undefined) c.hold = false;
    if (c.resolution === undefined) c.resolution = null;
    if (c.updatedAt === undefined && c.createdAt !== undefined) c.updatedAt = c.createdAt;
    return c;
  }
  function warn(...args) {
    try {
      console.warn('notabene:', ...args);
    } catch { /* no console */ }
  }
  /** Runs one part of the client on its own: a part that throws leaves the others running,
   * and is reported as the error it is (console.error). */
  function safely(label, fn) {
    try {
      return fn();
    } catch (e) {
      try { console.error('notabene:', label, e); } catch { /* no console */ }
      return undefined;
    }
  }

  /** Creates an element. `props`: class, text, and attributes (always via setAttribute). */
  function h(tag, props, ...children) {
    const el = D.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === null || v === undefined || v === false) continue;
        if (k === 'class') el.className = v;
        else if (k === 'text') el.textContent = str(v);
        else el.setAttribute(k, v === true ? '' : str(v));
      }
    }
    for (const child of children) append(el, child);
    return el;
  }
  /** The "Ctrl+Enter to save" hint, unless the main pointer is a finger (a touch screen,
   * where there is no Ctrl to press): null there. */
  function saveHint(tag) {
    const keyboard = !(window.matchMedia && window.matchMedia('(pointer: coarse)').matches);
    return keyboard ? h(tag, { class: 'nb-hint', text: t('saveHint') }) : null;
  }
  function append(el, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) {
      child.forEach((c) => { append(el, c); });
    } else if (typeof child === 'string' || typeof child === 'number') {
      el.appendChild(D.createTextNode(String(child)));
    } else {
      el.appendChild(child);
    }
  }

  function oneLine(s) {
    return str(s).replace(/\s+/g, ' ').trim();
  }
  function truncate(s, n) {
    const chars = Array.from(oneLine(s));
    return chars.length > n ? `${chars.slice(0, n - 1).join('')}…` : chars.join('');
  }

  const AUTHOR_RE = /^(.*?)\s*<([^<>]+)>\s*$/;
  function displayName(author) {
    const a = str(author).trim();
    const m = AUTHOR_RE.exec(a);
    if (m) return m[1].trim() || m[2].trim();
    return a || t('someone');
  }

  let tsFormat = null;
  function fmtTs(ts) {
    const s = str(ts);
    const d = new Date(s);
    if (!s || isNaN(d.getTime())) return s;
    try {
      tsFormat = tsFormat || new Intl.DateTimeFormat(LANG, { dateStyle: 'medium', timeStyle: 'short' });
      return tsFormat.format(d);
    } catch {
      return d.toISOString();
    }
  }
  let dayFormat = null;
  function fmtDay(day) {
    const s = str(day);
    const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s);
    if (!s || isNaN(d.getTime())) return s;
    try {
      dayFormat = dayFormat || new Intl.DateTimeFormat(LANG, { dateStyle: 'medium', timeZone: 'UTC' });
      return dayFormat.format(d);
    } catch {
      return s;
    }
  }

  /** A site-root-relative URL from the data, made relative to this page; unsafe schemes are refused. */
  function siteHref(u) {
    const s = str(u).trim();
    if (!s) return null;
    if (/^[a-z][a-z0-9+.-]*:/i.test(s)) return /^https?:/i.test(s) ? s : null;
    if (s.startsWith('//')) return null;
    if (s.charAt(0) === '/' || s.charAt(0) === '#' || s.charAt(0) === '?') return s;
    return ROOT + s;
  }
  function withParam(url, key, value) {
    const hashAt = url.indexOf('#');
    let base = hashAt >= 0 ? url.slice(0, hashAt) : url;
    const hash = hashAt >= 0 ? url.slice(hashAt) : '';
    const re = new RegExp(`([?&])${key}=[^&]*`);
    const enc = encodeURIComponent(value);
    if (re.test(base)) base = base.replace(re, `$1${key}=${enc}`);
    else base += `${base.includes('?') ? '&' : '?'}${key}=${enc}`;
    return base + hash;
  }

  function cssEscape(s) {
    return window.CSS && CSS.escape ? CSS.escape(s) : str(s).replace(/[^\w-]/g, '\\$&');
  }

  const STATUS_KEY = { open: 'sOpen', addressed: 'sAddressed', resolved: 'sResolved' };
  function statusOf(c) {
    const s = str(c && c.status);
    return STATUS_KEY[s] ? s : 'open';
  }
  function statusLabel(s) {
    return t(STATUS_KEY[s] || 'sOpen');
  }
  function anch(c) {
    return obj(c && c.anchoring);
  }
  function scopeOf(c) {
    const s = str(c && c.scope);
    if (s === 'page' || s === 'block' || s === 'selection') return s;
    return c && c.anchor && obj(c.anchor).kind ? 'block' : (c && c.anchor ? 'selection' : 'page');
  }
  function repliesText(n) {
    return t(n === 1 ? 'replies1' : 'repliesN', { n });
  }

  /** The anchor head of a comment: {icon, text, page: bool}. */
  function anchorHead(c, quoteMax, labelMax) {
    const scope = scopeOf(c);
    const a = obj(c && c.anchor);
    if (scope === 'page') return { icon: '', text: t('pageTag'), page: true };
    if (scope === 'block') {
      const kind = str(a.kind);
      const label = str(a.label) || str(anch(c).text) || str(a.key);
      return { icon: kind === 'mermaid' ? '📊' : '🖼', text: truncate(label, labelMax), page: false };
    }
    return { icon: '', text: truncate(str(a.quote) || str(anch(c).text), quoteMax), page: false };
  }
  function headEl(c, quoteMax, labelMax, extraClass) {
    const hd = anchorHead(c, quoteMax, labelMax);
    if (hd.page) return h('span', { class: `nb-tag nb-tag-page${extraClass ? ` ${extraClass}` : ''}`, text: hd.text });
    return h('span', { class: `nb-quote-chip${extraClass ? ` ${extraClass}` : ''}` },
      hd.icon ? `${hd.icon} ` : '', hd.icon ? hd.text : `“${hd.text}”`);
  }

  function firstMessage(c) {
    const th = arr(c && c.thread);
    return obj(th[0]);
  }

  /** The thread message a person's approval writes (`ops::APPROVAL` in the crate). */
  const APPROVAL = 'Approved the proposed change.';
  /** Who did what to a comment, from what the store records: who asked (the first message),
   * who applied its suggested edit (`suggestion.applied.by`), who closed it when a person did
   * (`resolution.by`), and who approved the agent's change (the approval message). */
  function credits(c) {
    const approvals = arr(c && c.thread).filter((m) => obj(m).body === APPROVAL);
    const who = (v) => str(v) ? displayName(str(v)) : '';
    return {
      proposer: who(firstMessage(c).author),
      applier: who(obj(obj(c && c.suggestion).applied).by),
      closer: who(obj(c && c.resolution).by),
      approver: approvals.length ? who(obj(approvals[approvals.length - 1]).author) : ''
    };
  }
  /** The label before a resolution note: a person's own action is labelled with that person,
   * never as the agent's. */
  function resolutionLabel(c) {
    const k = credits(c);
    if (k.applier) return t('appliedBy', { who: k.applier });
    if (k.closer) return t('closedBy', { who: k.closer });
    return statusOf(c) === 'addressed' ? t('proposed') : t('resolution');
  }

  /** Copies `text` to the clipboard, else selects `node` and copies the selection; says how it
   * went on `button`. */
  async function copyText(text, node, button) {
    const ok = () => { button.textContent = t('copied'); };
    const fallback = () => {
      try {
        const sel = window.getSelection();
        const r = D.createRange();
        r.selectNodeContents(node);
        sel.removeAllRanges();
        sel.addRange(r);
        if (D.execCommand && D.execCommand('copy')) ok();
        else button.textContent = t('copyFailed');
      } catch {
        button.textContent = t('copyFailed');
      }
    };
    if (!(navigator.clipboard && navigator.clipboard.writeText)) {
      fallback();
      return;
    }
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      fallback();
      return;
    }
    ok();
  }

  return { anch, append, arr, copyText, credits, cssEscape, displayName, firstMessage, fmtDay, fmtTs, h, headEl,
    inflateAll, num, obj, readJSON, repliesText, resolutionLabel, safely, saveHint, scopeOf, siteHref, statusLabel, statusOf,
    str, truncate, unlean, withParam };
})();
