/* Live — the write side's base (under serve only): its own state (whether the page is
 * writable, the build generation, the toast, the pending reload), the same-origin API, errors
 * and toasts, live reload that keeps the scroll position and waits for open drafts, the probe
 * that tells whether the page is served by a writable serve (Start then turns the write side
 * on), and the reviewer's identity (the dialog, the panel's control).
 * Uses: Locale, Dom, Paint (the chapter islands). */

/* exported Live */
const Live = (() => {
  const D = document;
  const HTML = document.documentElement;
  const { t } = Locale;
  const { arr, displayName, h, num, obj, safely, str } = Dom;
  const { islands } = Paint;

  /* ============================================================ write side (serve) */

  // The book's root: `/` under serve, `/b/<branch>/` under the hub (mdBook's path_to_root).
  const BASE = (() => {
    try { return new URL(Locale.ROOT || './', location.href).pathname; } catch { return '/'; }
  })();
  const API = `${BASE}__notabene/api/`;
  const SCROLL_KEY = 'notabene:scroll';
  const DONE_KEY = 'notabene:done';
  /** How long an Undo stays offered (and how old a reload may be to show it again). */
  const UNDO_MS = 12000;
  // Owned here; the others ask through writable() and isRestoring().
  const state = {
    on: false, // the write API answered
    generation: 0, // the build the page came from (as far as the client knows)
    identityBtn: null,
    signedIn: '', // `Name <email>` the hub's sign-in gives (the author of every write there)
    maintainer: false, // the hub's sign-in says they may resolve, hold and apply
    toast: null,
    toastTimer: 0,
    done: null, // the reader's last action {at, what} (see didSomething)
    restoring: false, // a live reload is putting the scroll position back
    reloadWanted: false,
    reloadTimer: 0,
    working: 0 // writes in flight and API call chains that hold the reload back (api, holdReload)
  };

  /** What the reader may do to comment `c` (under the hub, as its sign-in says: `own` — edit or
   * delete its first message, theirs; `decide` — resolve, reopen, hold, apply, a maintainer's).
   * Under serve, everything. */
  function rightsOver(c) {
    if (!state.signedIn) return { own: true, decide: true };
    const email = (s) => { const m = /<([^<>]+)>\s*$/.exec(str(s)); return m ? m[1].trim().toLowerCase() : ''; };
    const first = arr(obj(c).thread)[0];
    const mine = email(obj(first).author) !== '' && email(obj(first).author) === email(state.signedIn);
    return { own: mine, decide: state.maintainer };
  }

  /** Whether the page is served by a serve that takes writes (the write side is on). */
  const writable = () => state.on;
  /** Whether a live reload is putting the reader's scroll position back. */
  const isRestoring = () => state.restoring;

  function ls(key) {
    try { return localStorage.getItem(key) || ''; } catch { return ''; }
  }
  function lsSet(key, v) {
    try {
      if (v) localStorage.setItem(key, v);
      else localStorage.removeItem(key);
    } catch { /* storage off */ }
  }

  /** `Name <email>` (or `Name`) from the identity stored in this browser; '' when unset. */
  function authorString() {
    if (state.signedIn) return state.signedIn;
    const name = ls('notabene:author').trim();
    const email = ls('notabene:email').trim();
    if (!name) return '';
    return email ? `${name} <${email}>` : name;
  }

  /** One call to the serve API (same origin only). Resolves with the JSON body; rejects with an Error. */
  async function api(method, path, body) {
    // A write holds the live reload back until its answer is taken in: the rebuild it causes
    // may be announced before the answer arrives, and a reload then would lose what the caller
    // does with the answer (the toast saying what was done, with its Undo). The hold ends after
    // the caller's own continuation has run (a task later).
    if (method === 'GET') return request(method, path, body);
    state.working += 1;
    try {
      return await request(method, path, body);
    } finally {
      setTimeout(() => {
        state.working -= 1;
        maybeReload();
      }, 0);
    }
  }
  async function request(method, path, body) {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const token = ls('notabene:token');
    if (token) headers['x-notabene-token'] = token;
    let r;
    try {
      r = await fetch(API + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'same-origin',
        redirect: 'error'
      });
    } catch {
      const err = new Error(t('offline'));
      err.status = 0;
      throw err;
    }
    const text = await r.text();
    let data = null;
    try { data = JSON.parse(text); } catch { data = null; }
    if (!r.ok) {
      const err = new Error(data && typeof data.error === 'string' ? data.error : `HTTP ${r.status}`);
      err.status = r.status;
      err.data = data;
      throw err;
    }
    return data;
  }

  function showError(el, e) {
    if (!el) return;
    if (!e) {
      el.hidden = true;
      el.textContent = '';
      return;
    }
    el.textContent = typeof e === 'string' ? e : t('notSaved') + str(e.message || e);
    el.hidden = false;
  }
  function busy(buttons, on) {
    [...buttons].forEach((b) => { b.disabled = !!on; });
  }
  function toast(text, action, ms) {
    let el = state.toast;
    if (!el || !el.isConnected) {
      el = h('div', { class: 'nb-toast nb-ui', 'data-nb-ui': '', role: 'status', 'aria-live': 'polite' });
      D.body.appendChild(el);
      state.toast = el;
    }
    el.textContent = '';
    el.appendChild(h('span', { class: 'nb-toast-text', text }));
    if (action) {
      const b = h('button', { type: 'button', class: 'nb-btn nb-toast-action', text: action.label });
      b.addEventListener('click', action.fn);
      el.appendChild(b);
    }
    el.hidden = false;
    clearTimeout(state.toastTimer);
    if (!action || ms) state.toastTimer = setTimeout(() => { el.hidden = true; }, ms || 6000);
  }
  function hideToast() {
    if (state.toast) state.toast.hidden = true;
  }
  function wroteSomething() {
    toast(t('saved'));
  }

  /* ----- what the reader just did: told, undoable, and kept across the live reload */

  /**
   * Says what the reader just did — `{text, id, undo}`: `id` the comment acted on, `undo` the
   * `POST undo` request that takes it back (or null) — in a toast with Undo, and keeps it for
   * the live reload that follows, after which `Start` opens that comment again and says it again.
   */
  function didSomething(what) {
    state.done = { at: Date.now(), what };
    tellDone(what);
  }
  /** Before a live reload: the last action (of the last minute) goes to the next page. */
  function saveDone() {
    if (!state.done || !(Date.now() - state.done.at < 60000)) return;
    try {
      sessionStorage.setItem(DONE_KEY, JSON.stringify({ href: here(), at: state.done.at, what: state.done.what }));
    } catch { /* storage off: told before the reload only */ }
  }
  function tellDone(what) {
    const u = what.undo;
    toast(str(what.text), u ? { label: t('undo'), fn() { undo(u); } } : null, u ? UNDO_MS : 0);
  }
  /** Takes the change back through the guarded API; the page then rebuilds as usual. */
  async function undo(u) {
    if (state.toast) state.toast.querySelectorAll('button').forEach((b) => { b.disabled = true; });
    try {
      await api('POST', 'undo', u);
    } catch (e) {
      toast(t('notUndone') + str(e.message || e));
      return;
    }
    didSomething({ text: t('undone'), id: str(u.id), undo: null });
  }
  /** What the reader did just before this page was reloaded (once; null when nothing). */
  function takeDone() {
    let saved = null;
    try {
      saved = JSON.parse(sessionStorage.getItem(DONE_KEY) || 'null');
      sessionStorage.removeItem(DONE_KEY);
    } catch { return null; }
    if (!saved || saved.href !== here() || !(Date.now() - num(saved.at, 0) < 60000)) return null;
    // A second live reload (the rebuilt page after the patched one) carries it again.
    state.done = { at: num(saved.at, 0), what: obj(saved.what) };
    return state.done.what;
  }
  /** Runs `fn` once the page is back at the reader's scroll position (see `restoreScroll`). */
  function whenSettled(fn) {
    let tries = 0;
    const check = () => {
      if (HTML.getAttribute('data-nb-scroll') === 'restored' || ++tries > 300) fn();
      else window.setTimeout(check, 10);
    };
    check();
  }

  /* ----- live reload */

  function here() {
    return location.pathname + location.search;
  }
  function saveScroll() {
    try {
      sessionStorage.setItem(SCROLL_KEY, JSON.stringify({ href: here(), x: window.scrollX, y: window.scrollY }));
    } catch { /* storage off */ }
  }
  /** After a live reload: back to where the reader was. */
  function restoreScroll() {
    // `data-nb-scroll="restored"` on <html> once the page is where it will stay.
    const settled = () => { HTML.setAttribute('data-nb-scroll', 'restored'); };
    let saved = null;
    try {
      saved = JSON.parse(sessionStorage.getItem(SCROLL_KEY) || 'null');
      sessionStorage.removeItem(SCROLL_KEY);
    } catch {
      settled();
      return;
    }
    if (!saved || saved.href !== here()) {
      settled();
      return;
    }
    state.restoring = true;
    const go = () => { window.scrollTo(num(saved.x, 0), num(saved.y, 0)); };
    go();
    const again = () => {
      go();
      (window.requestAnimationFrame || setTimeout)(() => {
        go();
        settled();
      });
    };
    if (D.readyState === 'complete') again();
    else window.addEventListener('load', again);
  }

  function dirtyDrafts() {
    return [...D.querySelectorAll('[data-nb-draft]')].some((el) => str(el.value).trim() !== '') || !!D.querySelector('dialog.nb-dialog[open]');
  }
  function reloadNow() {
    saveScroll();
    saveDone();
    location.reload();
  }
  /** Keeps the page from reloading until `promise` settles: a chain of API calls (a
   * rejection and its revert) is not cut in two by the rebuild its first call causes. */
  async function holdReload(promise) {
    state.working += 1;
    try {
      return await promise;
    } finally {
      state.working -= 1;
      maybeReload();
    }
  }
  /** Reloads for a new build, unless the reader is writing something: then waits, with a note. */
  function maybeReload() {
    if (!state.reloadWanted) return;
    clearTimeout(state.reloadTimer);
    if (state.working > 0) return; // holdReload calls again when its chain is done
    if (dirtyDrafts()) {
      if (!state.toast || state.toast.hidden || !state.toast.querySelector('.nb-toast-action')) {
        toast(t('rebuilt'), { label: t('reloadNow'), fn: reloadNow });
      }
      state.reloadTimer = setTimeout(maybeReload, 1000);
      return;
    }
    reloadNow();
  }

  /** A build generation from the server: a new one reloads the page (lower: the server was
   * restarted, its site may differ too). */
  function onGeneration(g, patched) {
    if (g === state.generation) return;
    const next = g === state.generation + 1;
    state.generation = g;
    HTML.setAttribute('data-nb-generation', String(g));
    // The one change since this page's build only patched other chapters' islands: it stays.
    if (next && Array.isArray(patched) && !islands().some((isl) => patched.includes(str(isl.data.page)))) return;
    state.reloadWanted = true;
    maybeReload();
  }

  /** Follows the build generation over the live-reload WebSocket; long-polls when no socket
   * can be opened. */
  function watch() {
    if (typeof window.WebSocket !== 'function') return longPoll();
    let opened = false;
    let retry = 0;
    const connect = () => {
      const token = ls('notabene:token');
      const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
      const url = `${scheme}//${location.host}${BASE}__notabene/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`;
      let ws;
      try { ws = new WebSocket(url); } catch { return longPoll(); }
      ws.onopen = () => {
        opened = true;
        retry = 0;
        HTML.setAttribute('data-nb-live', 'socket');
      };
      ws.onmessage = (ev) => {
        let d = null;
        try { d = JSON.parse(ev.data); } catch { return; }
        onGeneration(num(obj(d).generation, state.generation), obj(d).patched);
      };
      ws.onclose = () => {
        // Never opened: no socket here, long-poll. Dropped: the server restarted; again.
        if (!opened) return longPoll();
        retry++;
        setTimeout(connect, Math.min(30000, 250 * 2 ** Math.min(retry, 7)));
      };
    };
    connect();
  }

  /** Long-polls the build generation (the fallback of the live-reload socket). */
  function longPoll() {
    HTML.setAttribute('data-nb-live', 'poll');
    let failures = 0;
    const loop = async () => {
      let d;
      try {
        d = obj(await api('GET', `status?since=${state.generation}`));
      } catch {
        failures++;
        setTimeout(loop, Math.min(30000, 500 * 2 ** Math.min(failures, 6)));
        return;
      }
      failures = 0;
      onGeneration(num(d.generation, state.generation), d.patched);
      setTimeout(loop, 20);
    };
    loop();
  }

  /** A token handed over in the URL (`?nb-token=`, printed by `serve --host`): kept in this
   * browser, taken out of the address bar. */
  function adoptToken() {
    const m = /[?&]nb-token=([^&#]*)/.exec(location.search);
    if (!m) return;
    try { lsSet('notabene:token', decodeURIComponent(m[1])); } catch { return; }
    const rest = location.search.replace(/([?&])nb-token=[^&#]*&?/, '$1').replace(/[?&]$/, '');
    try { history.replaceState(history.state, '', location.pathname + rest + location.hash); } catch { /* file: */ }
  }

  /** The build generation this page was served from (serve's `Server-Timing: nb-generation`
   * entry), or null where the browser does not expose it. */
  function servedGeneration() {
    try {
      const nav = performance.getEntriesByType('navigation')[0];
      const hit = arr(nav && nav.serverTiming).filter((e) => e.name === 'nb-generation')[0];
      return hit && isFinite(hit.duration) && hit.duration > 0 ? hit.duration : null;
    } catch {
      return null;
    }
  }

  /** Asks the server whether this page is served by `mdbook-notabene serve`; runs
   * `onWritable` (start.js: the write side) when its API takes writes. */
  async function probe(onWritable) {
    if (!/^https?:$/.test(location.protocol) || typeof window.fetch !== 'function') return;
    adoptToken();
    let d;
    try {
      d = obj(await api('GET', 'status'));
    } catch {
      return; // a static site: stay read-only
    }
    if (d.api !== 1 || typeof d.generation !== 'number') return;
    const served = servedGeneration();
    state.generation = served === null ? d.generation : served;
    if (typeof d.identity === 'string') state.signedIn = d.identity;
    // A branch the hub cannot push to: readable, not writable, and the reader told why.
    if (typeof d.readOnly === 'string') toast(t('readOnly', { why: d.readOnly }), null, 12000);
    state.maintainer = d.maintainer === true;
    if (d.writable === true) {
      state.on = true;
      safely('write mode', onWritable);
    }
    // A build that finished between this page's response and the status: reload now.
    onGeneration(d.generation);
    watch();
  }

  /* ----- identity */

  /** Runs `fn(author)` with the stored identity, asking for it first if there is none. */
  function withAuthor(fn, opener) {
    const a = authorString();
    if (a) {
      fn(a);
      return;
    }
    openIdentity(() => {
      const b = authorString();
      if (b) fn(b);
    }, opener);
  }

  function openIdentity(onDone, opener) {
    // Signed in through the hub: who writes is the sign-in's, not this browser's.
    if (state.signedIn) return;
    const old = D.querySelector('dialog.nb-identity');
    if (old) old.remove();
    const nameIn = h('input', { type: 'text', class: 'nb-input nb-identity-name', name: 'name', autocomplete: 'name', required: true });
    const emailIn = h('input', { type: 'email', class: 'nb-input nb-identity-email', name: 'email', autocomplete: 'email' });
    nameIn.value = ls('notabene:author');
    emailIn.value = ls('notabene:email');
    const err = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    const save = h('button', { type: 'button', class: 'nb-btn nb-primary nb-identity-save', text: t('save') });
    const cancel = h('button', { type: 'button', class: 'nb-btn nb-identity-cancel', text: t('cancel') });
    const dlg = h('dialog', { class: 'nb-dialog nb-identity nb-ui', 'data-nb-ui': '', 'aria-labelledby': 'nb-identity-title' },
      h('h2', { id: 'nb-identity-title', class: 'nb-dialog-title', text: t('identityTitle') }),
      h('p', { class: 'nb-note', text: t('identityNote') }),
      h('label', { class: 'nb-field' }, h('span', { text: t('name') }), nameIn),
      h('label', { class: 'nb-field' }, h('span', { text: t('email') }), emailIn),
      err,
      h('div', { class: 'nb-form-actions' }, cancel, save));
    let closed = false;
    const finish = (ok) => {
      if (closed) return;
      closed = true;
      if (dlg.open && dlg.close) dlg.close();
      dlg.remove();
      if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
      if (ok && onDone) onDone();
      maybeReload();
    };
    save.addEventListener('click', () => {
      const name = nameIn.value.trim();
      const email = emailIn.value.trim();
      if (!name) {
        showError(err, t('needName'));
        nameIn.focus();
        return;
      }
      if (/[<>]/.test(name + email)) {
        showError(err, t('badChars'));
        return;
      }
      lsSet('notabene:author', name);
      lsSet('notabene:email', email);
      updateIdentityControl();
      finish(true);
    });
    cancel.addEventListener('click', () => { finish(false); });
    dlg.addEventListener('cancel', (e) => { e.preventDefault(); finish(false); });
    dlg.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
      } else if (e.key === 'Enter' && e.target instanceof Element && e.target.matches('input')) {
        e.preventDefault();
        save.click();
      }
    });
    D.body.appendChild(dlg);
    if (typeof dlg.showModal === 'function') dlg.showModal();
    else dlg.setAttribute('open', '');
    nameIn.focus();
  }

  /** The identity control, first in the panel's foot (`foot`, null when there is no panel). */
  function setupIdentityControl(foot) {
    if (!foot) return;
    const b = h('button', { type: 'button', class: 'nb-identity-btn' });
    b.addEventListener('click', () => { openIdentity(null, b); });
    foot.insertBefore(b, foot.firstChild);
    state.identityBtn = b;
    updateIdentityControl();
  }
  function updateIdentityControl() {
    const b = state.identityBtn;
    if (!b) return;
    const a = authorString();
    b.textContent = a ? t('you', { name: displayName(a) }) : t('setName');
    b.title = state.signedIn ? t('signedIn') : t('changeIdentity');
    b.disabled = !!state.signedIn;
  }

  return { api, busy, didSomething, rightsOver, hideToast, holdReload, isRestoring, maybeReload, probe, restoreScroll,
    setupIdentityControl, showError, takeDone, tellDone, toast, whenSettled, withAuthor, writable, wroteSomething };
})();
