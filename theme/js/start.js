/* Start — start-up, and the wiring of the calls that go against the join order: hands
 * Panel the write side's thread tools, puts the browser tests' hooks on window.__notabene,
 * finds the chapter islands and the generated views' data and starts each part, and turns the
 * write side on when Live's probe finds a writable serve. Uses every other namespace; runs
 * last. */

const Start = (() => {
  const D = document;
  const HTML = document.documentElement;
  const { t } = Locale;
  const { arr, cssEscape, inflateAll, obj, readJSON, safely, str } = Dom;
  const { wordDiff } = Words;
  const { captureAnchor, mainEl, textModel } = TextModel;
  const { comment, markPending, setupBlocks, setupCode, setupMarks, summary } = Paint;
  const { hideToast, probe, restoreScroll, setupIdentityControl, takeDone, tellDone, toast, whenSettled, writable } = Live;
  const { threadOptsOf } = Thread;
  const { panelFoot, reopen, setupDeepLink, setupDiscussion, setupEvents, setupPanel } = Panel;
  const { setupHeader } = Toolbar;
  const { initView, reviewComment, viewHeader } = Views;
  const { placeComposer, setupSelection } = Compose;
  const { addApply, setupBlockTools, setupPageComposer, threadActions } = Actions;

  // The thread actions and Apply are Actions', later in the join than Thread, which draws them;
  // the composer is Compose's, later than Panel, which places it with its popovers.
  Thread.useWriteTools({ threadActions, addApply });
  Panel.useComposer(placeComposer);

  // For the browser tests: the word diff, and the text model anchors are captured from.
  window.__notabene.wordDiff = wordDiff;
  window.__notabene.captureAnchor = captureAnchor;
  window.__notabene.flatText = () => {
    const main = mainEl();
    return main ? textModel(main).text : '';
  };

  /* ================================================================= start */

  /** The view data of an app: inside it, or the next sibling script (the generated chapters' layout), else the first unused one of the same view. */
  function viewDataFor(app, all, used) {
    const inner = app.querySelector('script.nb-view-data');
    if (inner) return inner;
    for (let el = app.nextElementSibling; el; el = el.nextElementSibling) {
      if (el.matches('script.nb-view-data')) return used.has(el) ? null : el;
      if (el.matches('.nb-app')) break;
    }
    const want = app.getAttribute('data-nb-view');
    for (let i = 0; i < all.length; i++) {
      if (used.has(all[i])) continue;
      const d = obj(readJSON(all[i]));
      if (!want || str(d.view) === want) return all[i];
    }
    return null;
  }

  /** A chapter page (one island per chapter; print.html has them all): its data read, then
   * each part painted and set up, each on its own (one failing leaves the others). */
  function initChapter(islands) {
    Paint.load(islands);
    if (summary()?.public === true) HTML.classList.add('nb-public');
    safely('marks', setupMarks);
    safely('pending', markPending);
    safely('blocks', setupBlocks);
    safely('code', () => { setupCode(islands); });
    safely('discussion', () => { setupDiscussion(islands); });
    let toggle = null;
    safely('header', () => { toggle = setupHeader(); });
    safely('panel', () => { setupPanel(toggle); });
    safely('events', setupEvents);
    safely('deep link', setupDeepLink);
    safely('read-only cue', setupReadOnlyCue);
    safely('print notes', Print.setup);
  }

  /** A static copy of the book (or print.html) takes no comments: the first time a reader
   * selects text in it, a toast says so and where they can be written, once per page. */
  function setupReadOnlyCue() {
    let told = false;
    D.addEventListener('pointerup', () => {
      if (told || writable() && Paint.islands().length === 1) return;
      window.setTimeout(() => {
        const sel = window.getSelection();
        const main = mainEl();
        if (told || !sel || sel.isCollapsed || !String(sel).trim() || !main) return;
        if (!main.contains(sel.anchorNode) || (writable() && Paint.islands().length === 1)) return;
        told = true;
        toast(t('readOnlyCue'));
      }, 0);
    });
  }

  /* ----- the write side (serve) */

  /** Turns the write side on once the probe found a writable serve: the actions of every
   * thread on screen, the selection button, the block and page composers (on a page with one
   * chapter: where new comments go, handed to each), the identity control. */
  function enableWrite() {
    HTML.classList.add('nb-write');
    // Under serve, a published book's comments are shown as usual: this is the author's copy.
    HTML.classList.remove('nb-public');
    D.querySelectorAll('.nb-thread[data-nb-id]').forEach((wrap) => {
      const opts = threadOptsOf(wrap);
      const c = comment(wrap.getAttribute('data-nb-id')) || reviewComment(wrap.getAttribute('data-nb-id'));
      const sb = wrap.querySelector(':scope > .nb-suggestion');
      if (sb && c) addApply(sb, c);
      if (opts.noActions || wrap.querySelector(':scope > .nb-actions')) return;
      if (c) wrap.appendChild(threadActions(c));
    });
    // New comments need one chapter per page (print.html carries them all: read-only there).
    const islands = Paint.islands();
    if (islands.length === 1 && mainEl()) {
      const data = islands[0].data;
      const target = { page: str(data.page), space: str(data.space) };
      if (target.page && target.space) {
        safely('selection', () => { setupSelection(target); });
        safely('block tools', () => { setupBlockTools(arr(data.blocks), target); });
        safely('page composer', () => { setupPageComposer(islands[0].el, target); });
        safely('editor', () => { Editor.setup(target); });
      }
    }
    safely('identity', () => { setupIdentityControl(panelFoot()); });
  }

  function start() {
    const islands = [...D.querySelectorAll('script.nb-data')];
    const apps = [...D.querySelectorAll('.nb-app[data-nb-view]')];
    const viewData = [...D.querySelectorAll('script.nb-view-data')];
    if (!islands.length && !apps.length) return;
    HTML.classList.add('nb-on');
    if (/^https?:$/.test(location.protocol)) safely('scroll', restoreScroll);
    let firstView = null;
    const used = new Set();
    apps.forEach((app) => {
      const el = viewDataFor(app, viewData, used);
      if (!el) return;
      used.add(el);
      const data = obj(readJSON(el));
      safely('view', () => {
        const v = initView(app, data);
        if (!firstView) firstView = { view: v, data };
      });
    });
    if (islands.length) initChapter(islands);
    else if (firstView) safely('view header', () => { viewHeader(firstView.view, firstView.data); });
    safely('after reload', () => { resumeDone(islands.length > 0); });
    safely('probe', () => { probe(enableWrite); });
  }

  /** After the live reload that followed the reader's own action: the thread (or the /review
   * card) acted on is open again, the page where it was, and the toast says again what was
   * done, with its Undo. */
  function resumeDone(chapter) {
    const what = takeDone();
    if (!what) return;
    whenSettled(() => {
      safely('reopen', () => {
        const id = str(what.id);
        if (chapter) reopen(id);
        else {
          const card = D.querySelector(`.nb-card[data-nb-id="${cssEscape(id)}"]`);
          if (card) {
            card.classList.add('nb-card-again');
            card.setAttribute('tabindex', '-1');
            card.focus({ preventScroll: true });
          }
        }
        tellDone(what);
      });
    });
  }

  /**
   * Starts once the page's deflated data, if any, is inflated (at once when there is none); a
   * reader whose browser cannot read some of it is told so, rather than shown no comments.
   */
  async function boot() {
    if (!D.querySelector('script[data-nb-encoding]')) return start();
    const failures = await inflateAll();
    start();
    if (failures) {
      safely('unreadable data', () => {
        toast(t('unreadableData'), { label: t('close'), fn: hideToast });
      });
    }
  }

  return { boot };
})();

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', Start.boot);
else Start.boot();
