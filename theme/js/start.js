/* Start-up: finds the chapter islands and the generated views' data and starts each part.
 * Uses every other module; runs last. */

/* ================================================================= start */

/** The view data of an app: inside it, or the next sibling script (the generated chapters' layout), else the first unused one of the same view. */
function viewDataFor(app, all, used) {
  var inner = app.querySelector('script.nb-view-data');
  if (inner) return inner;
  for (var el = app.nextElementSibling; el; el = el.nextElementSibling) {
    if (el.matches('script.nb-view-data')) return used.has(el) ? null : el;
    if (el.matches('.nb-app')) break;
  }
  var want = app.getAttribute('data-nb-view');
  for (var i = 0; i < all.length; i++) {
    if (used.has(all[i])) continue;
    var d = obj(readJSON(all[i]));
    if (!want || str(d.view) === want) return all[i];
  }
  return null;
}

function start() {
  var islands = Array.prototype.slice.call(D.querySelectorAll('script.nb-data'));
  var apps = Array.prototype.slice.call(D.querySelectorAll('.nb-app[data-nb-view]'));
  var viewData = Array.prototype.slice.call(D.querySelectorAll('script.nb-view-data'));
  if (!islands.length && !apps.length) return;
  HTML.classList.add('nb-on');
  if (/^https?:$/.test(location.protocol)) safely('scroll', restoreScroll);
  var firstView = null;
  var used = new Set();
  apps.forEach(function (app) {
    var el = viewDataFor(app, viewData, used);
    if (!el) return;
    used.add(el);
    var data = obj(readJSON(el));
    safely('view', function () {
      var v = initView(app, data);
      if (!firstView) firstView = { view: v, data: data };
    });
  });
  if (islands.length) initChapter(islands);
  else if (firstView) safely('view header', function () { viewHeader(firstView.view, firstView.data); });
  safely('probe', probe);
}

/**
 * Starts once the page's deflated data, if any, is inflated (at once when there is none); a
 * reader whose browser cannot read some of it is told so, rather than shown no comments.
 */
function boot() {
  if (!D.querySelector('script[data-nb-encoding]')) return start();
  inflateAll().then(function (failures) {
    start();
    if (failures) {
      safely('unreadable data', function () {
        toast(t('unreadableData'), { label: t('close'), fn: function () { W.toast.hidden = true; } });
      });
    }
  });
}

if (D.readyState === 'loading') D.addEventListener('DOMContentLoaded', boot);
else boot();
