/* Toolbar — the plugin's place in mdBook's menu bar, drawn from what exists: the panel toggle
 * (on a chapter, whatever the counts: a closed panel is reopened there) and the link to /review
 * (when something waits for approval, or always in `review = "approve"`). Their icons are inline
 * SVG, as mdBook's own header icons are, so no emoji font is needed; each control carries its
 * accessible name, the icons are hidden from assistive technology. Uses: Locale, Dom, Paint (the chapter's data). */

/* exported Toolbar */
const Toolbar = (() => {
  const D = document;
  const SVG = 'http://www.w3.org/2000/svg';
  const { ROOT, t } = Locale;
  const { h, statusOf } = Dom;
  const { comments, reviewMode, summary } = Paint;

  // Outlines on a 24×24 grid, stroked with the text colour.
  const PATHS = {
    comment: 'M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z',
    check: 'M20 6 9 17l-5-5',
    print: 'M6 9V2h12v7M6 18H4a2 2 0 0 1-2-2v-5a2 2 0 0 1 2-2h16a2 2 0 0 1 2 2v5a2 2 0 0 1-2 2h-2M6 14h12v8H6z',
  };

  /** The icon `name` as an inline `<svg>`, hidden from assistive technology. */
  const icon = (name) => {
    const svg = D.createElementNS(SVG, 'svg');
    const attrs = {
      class: `nb-icon nb-icon-${name}`, viewBox: '0 0 24 24', 'aria-hidden': 'true', focusable: 'false',
      fill: 'none', stroke: 'currentColor', 'stroke-width': '2', 'stroke-linecap': 'round', 'stroke-linejoin': 'round',
    };
    for (const [k, v] of Object.entries(attrs)) svg.setAttribute(k, v);
    const path = D.createElementNS(SVG, 'path');
    path.setAttribute('d', PATHS[name]);
    svg.appendChild(path);
    return svg;
  };

  /** mdBook's right-hand menu buttons, or null on a page without mdBook's menu bar. */
  const headerSlot = () =>
    D.querySelector('#mdbook-menu-bar .right-buttons') || D.querySelector('.menu-bar .right-buttons');

  /** The link to /review with the number of comments waiting for approval; null when none
   * waits, unless `force` (`review = "approve"`, where every change is approved there). */
  const reviewLink = (addressed, force) => {
    if (!(addressed > 0) && !force) return null;
    const label = t('reviewLink', { n: addressed || 0 });
    return h('a', { class: 'nb-review-link', href: `${ROOT}review.html`, title: label, 'aria-label': label },
      icon('check'),
      h('span', { class: 'nb-count nb-count-addressed', 'aria-hidden': 'true', text: String(addressed || 0) }));
  };

  /** Puts the items that exist (`items`, nulls left out) into the menu bar, once per page.
   * Returns the box, or null when there is nothing to put or nowhere to put it. */
  const mount = (items) => {
    const slot = headerSlot();
    const present = items.filter(Boolean);
    if (!slot || !present.length || slot.querySelector('.nb-header')) return null;
    const box = h('span', { class: 'nb-header nb-ui', 'data-nb-ui': '' }, present);
    slot.insertBefore(box, slot.firstChild);
    return box;
  };

  /** A chapter's header: the panel toggle with the open count, and the review link when there
   * is one. Returns the toggle (Panel's, handed to it by Start), or null when not mounted. */
  const setupHeader = () => {
    const pageOpen = comments().filter((c) => statusOf(c) !== 'resolved').length;
    const openN = typeof summary()?.open === 'number' ? summary().open : pageOpen;
    const label = `${t('togglePanel')} — ${summary() ? t('openInBook', { n: openN }) : t('openOnPage', { n: openN })}`;
    const toggle = h('button', {
      type: 'button', id: 'nb-panel-toggle', class: 'icon-button nb-toggle',
      'aria-controls': 'nb-panel', 'aria-expanded': 'false', title: label, 'aria-label': label,
    }, icon('comment'), openN > 0 ? h('span', { class: 'nb-count', 'aria-hidden': 'true', text: String(openN) }) : null);
    const addressed = typeof summary()?.addressed === 'number'
      ? summary().addressed
      : comments().filter((c) => statusOf(c) === 'addressed').length;
    return mount([toggle, reviewLink(addressed, reviewMode() === 'approve')]) ? toggle : null;
  };

  return { headerSlot, icon, mount, reviewLink, setupHeader };
})();
