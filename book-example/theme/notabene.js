/* mdbook-notabene 0.1.0 — managed by `mdbook-notabene install`; do not edit */
/*! mdbook-notabene client.
 *
 * Reads the JSON data islands the `notabene` preprocessor puts in each chapter
 * (`script.nb-data`) and in the generated review / comments / journal chapters
 * (`script.nb-view-data`), and turns them into a reading UI: marks, threads,
 * a side panel with filters, the page discussion, block badges, code highlights,
 * deep links and the review cards.
 *
 * Under `mdbook-notabene serve` (the page is served over http(s) and
 * `/__notabene/api/status` answers) it also becomes the writing UI: comments on a
 * selection, on an image or diagram, on the page; replies, edits, resolve, reopen,
 * hold, delete; approve / reject on the review page; an identity dialog; and a live
 * reload that keeps the scroll position when the site is rebuilt.
 *
 * Rules this file keeps:
 *  - no network request except same-origin `/__notabene/api/*` calls, and those only
 *    when the page is served over http(s) (a `file://` book makes none at all);
 *  - every piece of comment text goes through textContent / createTextNode;
 *  - JSON is read with JSON.parse(el.textContent);
 *  - every element it inserts carries `data-nb-ui` (or sits inside one that does), so
 *    the text model used to anchor comments skips it;
 *  - on a page without data it does nothing at all.
 */
(function () {
  'use strict';

  if (window.__notabene) return;
  window.__notabene = { version: 1 };

  var D = document;
  var HTML = D.documentElement;
  var LANG = HTML.getAttribute('lang') || (navigator.language || 'en');
  var IS_FR = /^fr/i.test(LANG);
  var ROOT = (function () {
    try {
      // mdBook declares `const path_to_root` in an inline script: a global binding, not a window property.
      // eslint-disable-next-line no-undef
      return typeof path_to_root === 'string' ? path_to_root : '';
    } catch (e) {
      return '';
    }
  })();

  /* ------------------------------------------------------------------ i18n */

  var STRINGS = {
    en: {
      comments: 'Comments',
      panelTitle: 'Comments on this page',
      togglePanel: 'Show or hide the comments on this page',
      openInBook: '{n} open comments in this book',
      openOnPage: '{n} open comments on this page',
      reviewLink: 'Review: {n} to validate',
      filters: 'Filter comments',
      fOpen: 'Open',
      fAddressed: 'To validate',
      fResolved: 'Resolved',
      fAll: 'All',
      sOpen: 'open',
      sAddressed: 'to validate',
      sResolved: 'resolved',
      onHold: 'on hold',
      detached: 'detached',
      detachedLong: 'Detached: the quoted text is no longer on this page.',
      noneForFilter: 'No comments for this filter.',
      noneOnPage: 'No comments on this page.',
      pageDiscussion: 'Page discussion',
      pageDiscussionLink: 'Page discussion ({n}) ↓',
      resolvedCount: '{n} resolved',
      close: 'Close',
      comment: 'Comment',
      nComments: '{n} comments',
      markLabel: 'Comment by {name} on “{text}” ({status}). Press Enter to read.',
      badgeLabel: 'Read the {n} comment(s) on this {kind}',
      kImage: 'image',
      kDiagram: 'diagram',
      kCode: 'code block',
      replies1: '{n} reply',
      repliesN: '{n} replies',
      resolution: 'Resolution: ',
      proposed: 'Proposed by the agent — ',
      toValidate: 'To validate →',
      pageTag: 'page',
      someone: 'someone',
      notFound: 'This comment is not in the data of this page.',
      allComments: 'All comments',
      journal: 'Journal',
      // review
      nothingToValidate: 'Nothing to validate ✓',
      noChanges: 'No recorded changes',
      pNoLink: 'The resolution has no journal entry.',
      pUnknownEntry: 'The resolution points at a journal entry that does not exist.',
      pNotInChanges: 'The journal entry does not list this comment in its changes.',
      alsoCarries: 'This page also carries: ',
      diffView: 'Diff view',
      unified: 'Unified',
      split: 'Side by side',
      noGit: 'No git repository',
      unchanged: 'Unchanged since the last commit (already committed?)',
      pageNotFound: 'Page not found',
      unknownRef: 'Unknown commit',
      untracked: 'New file, not tracked by git yet: the whole file is shown.',
      noDiff: 'No diff available',
      diffCommit: 'Changes in commit {ref}',
      diffWorktree: 'Uncommitted changes (working tree vs HEAD)',
      approve: '✓ Approve',
      reject: 'Reject',
      reasonPlaceholder: 'Why? The reason is added to the thread as a reply.',
      staticNote: 'This site is static: run this command in the repository to record your decision.',
      copy: 'Copy',
      copied: 'Copied ✓',
      copyFailed: 'Copy failed: select the command',
      viewInPage: 'View in page',
      journalEntry: 'Journal entry: ',
      modeApprove: 'Approve mode: the agent proposes, you validate each change.',
      modeAuto: 'Auto mode: comments an agent leaves “to validate” are listed here.',
      cardsCount: '{n} to validate',
      // comments view
      search: 'Search',
      searchPlaceholder: 'Search pages, quotes and messages',
      status: 'Status',
      sActive: 'Active (not resolved)',
      hold: 'Hold',
      holdAll: 'All',
      held: 'On hold',
      notHeld: 'Not on hold',
      page: 'Page',
      allPages: 'All pages',
      shown: '{shown} / {total}',
      updated: 'updated {date}',
      noMatch: 'No comment matches these filters.',
      // journal
      emptyJournal: 'The journal is empty.',
      commentIds: 'Comments: ',
      // writing (serve)
      commentVerb: 'Comment',
      commentOnSel: 'Comment on the selected text',
      commentOn: 'Comment on this {kind}',
      newComment: 'New comment',
      bodyPlaceholder: 'Your comment',
      replyPlaceholder: 'Your reply',
      discussionPlaceholder: 'A comment on the whole page',
      saveHint: 'Ctrl+Enter (⌘+Enter) to save',
      save: 'Save',
      cancel: 'Cancel',
      send: 'Send',
      reply: 'Reply',
      edit: 'Edit',
      resolve: 'Resolve',
      reopen: 'Reopen',
      holdOn: 'Hold',
      holdOff: 'Release hold',
      del: 'Delete',
      deleteConfirm: 'Delete this comment and its replies?',
      deleted: 'Deleted.',
      emptyBody: 'Write something first.',
      needReason: 'Write the reason first.',
      sendReject: 'Send the rejection',
      approvedDone: 'Approved ✓ — the page refreshes once the book is rebuilt.',
      rejectedDone: 'Rejected: the comment is open again, with your reason in its thread.',
      saved: 'Saved — the page refreshes once the book is rebuilt.',
      notSaved: 'Not saved: ',
      offline: 'the server did not answer (is mdbook-notabene serve still running?)',
      rebuilt: 'The book was rebuilt.',
      reloadNow: 'Reload',
      identityTitle: 'Who is commenting?',
      identityNote: 'Your name, and optionally your email, are kept in this browser and written into each comment as “Name <email>”.',
      name: 'Name',
      email: 'Email (optional)',
      needName: 'Enter your name.',
      badChars: 'Leave out the characters < and >.',
      you: 'You: {name}',
      setName: 'Set your name',
      changeIdentity: 'Change the name written into your comments'
    },
    fr: {
      comments: 'Commentaires',
      panelTitle: 'Commentaires de la page',
      togglePanel: 'Afficher ou masquer les commentaires de la page',
      openInBook: '{n} commentaires ouverts dans ce livre',
      openOnPage: '{n} commentaires ouverts sur cette page',
      reviewLink: 'Relecture : {n} à valider',
      filters: 'Filtrer les commentaires',
      fOpen: 'Ouverts',
      fAddressed: 'À valider',
      fResolved: 'Résolus',
      fAll: 'Tous',
      sOpen: 'ouvert',
      sAddressed: 'à valider',
      sResolved: 'résolu',
      onHold: 'en attente',
      detached: 'détaché',
      detachedLong: 'Détaché : le texte cité ne figure plus sur cette page.',
      noneForFilter: 'Aucun commentaire pour ce filtre.',
      noneOnPage: 'Aucun commentaire sur cette page.',
      pageDiscussion: 'Discussion de la page',
      pageDiscussionLink: 'Discussion de la page ({n}) ↓',
      resolvedCount: '{n} résolu(s)',
      close: 'Fermer',
      comment: 'Commentaire',
      nComments: '{n} commentaires',
      markLabel: 'Commentaire de {name} sur « {text} » ({status}). Entrée pour lire.',
      badgeLabel: 'Lire le(s) {n} commentaire(s) sur ce {kind}',
      kImage: 'image',
      kDiagram: 'diagramme',
      kCode: 'bloc de code',
      replies1: '{n} réponse',
      repliesN: '{n} réponses',
      resolution: 'Résolution : ',
      proposed: 'Proposé par l’agent — ',
      toValidate: 'À valider →',
      pageTag: 'page',
      someone: 'quelqu’un',
      notFound: 'Ce commentaire ne figure pas dans les données de cette page.',
      allComments: 'Tous les commentaires',
      journal: 'Journal',
      nothingToValidate: 'Rien à valider ✓',
      noChanges: 'Aucune modification enregistrée',
      pNoLink: 'La résolution ne renvoie à aucune entrée du journal.',
      pUnknownEntry: 'La résolution renvoie à une entrée du journal qui n’existe pas.',
      pNotInChanges: 'L’entrée du journal ne cite pas ce commentaire dans ses modifications.',
      alsoCarries: 'Cette page porte aussi : ',
      diffView: 'Affichage du diff',
      unified: 'Unifié',
      split: 'Côte à côte',
      noGit: 'Pas de dépôt git',
      unchanged: 'Inchangé depuis le dernier commit (déjà commité ?)',
      pageNotFound: 'Page introuvable',
      unknownRef: 'Commit inconnu',
      untracked: 'Nouveau fichier, pas encore suivi par git : tout le fichier est affiché.',
      noDiff: 'Aucun diff disponible',
      diffCommit: 'Modifications du commit {ref}',
      diffWorktree: 'Modifications non commitées (copie de travail / HEAD)',
      approve: '✓ Approuver',
      reject: 'Rejeter',
      reasonPlaceholder: 'Pourquoi ? La raison est ajoutée au fil comme réponse.',
      staticNote: 'Ce site est statique : lancez cette commande dans le dépôt pour enregistrer votre décision.',
      copy: 'Copier',
      copied: 'Copié ✓',
      copyFailed: 'Échec de la copie : sélectionnez la commande',
      viewInPage: 'Voir dans la page',
      journalEntry: 'Entrée du journal : ',
      modeApprove: 'Mode approbation : l’agent propose, vous validez chaque modification.',
      modeAuto: 'Mode automatique : les commentaires laissés « à valider » par un agent sont listés ici.',
      cardsCount: '{n} à valider',
      search: 'Rechercher',
      searchPlaceholder: 'Rechercher dans les pages, citations et messages',
      status: 'Statut',
      sActive: 'Actifs (non résolus)',
      hold: 'Attente',
      holdAll: 'Tous',
      held: 'En attente',
      notHeld: 'Pas en attente',
      page: 'Page',
      allPages: 'Toutes les pages',
      shown: '{shown} / {total}',
      updated: 'modifié {date}',
      noMatch: 'Aucun commentaire ne correspond à ces filtres.',
      emptyJournal: 'Le journal est vide.',
      commentIds: 'Commentaires : ',
      commentVerb: 'Commenter',
      commentOnSel: 'Commenter le texte sélectionné',
      commentOn: 'Commenter ({kind})',
      newComment: 'Nouveau commentaire',
      bodyPlaceholder: 'Votre commentaire',
      replyPlaceholder: 'Votre réponse',
      discussionPlaceholder: 'Un commentaire sur toute la page',
      saveHint: 'Ctrl+Entrée (⌘+Entrée) pour enregistrer',
      save: 'Enregistrer',
      cancel: 'Annuler',
      send: 'Envoyer',
      reply: 'Répondre',
      edit: 'Modifier',
      resolve: 'Résoudre',
      reopen: 'Rouvrir',
      holdOn: 'Mettre en attente',
      holdOff: 'Lever l’attente',
      del: 'Supprimer',
      deleteConfirm: 'Supprimer ce commentaire et ses réponses ?',
      deleted: 'Supprimé.',
      emptyBody: 'Écrivez d’abord quelque chose.',
      needReason: 'Donnez d’abord la raison.',
      sendReject: 'Envoyer le rejet',
      approvedDone: 'Approuvé ✓ — la page se met à jour dès que le livre est reconstruit.',
      rejectedDone: 'Rejeté : le commentaire est rouvert, avec votre raison dans son fil.',
      saved: 'Enregistré — la page se met à jour dès que le livre est reconstruit.',
      notSaved: 'Non enregistré : ',
      offline: 'le serveur ne répond pas (mdbook-notabene serve tourne-t-il encore ?)',
      rebuilt: 'Le livre a été reconstruit.',
      reloadNow: 'Recharger',
      identityTitle: 'Qui commente ?',
      identityNote: 'Votre nom, et si vous voulez votre e-mail, sont gardés dans ce navigateur et écrits dans chaque commentaire sous la forme « Nom <e-mail> ».',
      name: 'Nom',
      email: 'E-mail (facultatif)',
      needName: 'Indiquez votre nom.',
      badChars: 'N’utilisez pas les caractères < et >.',
      you: 'Vous : {name}',
      setName: 'Indiquer votre nom',
      changeIdentity: 'Changer le nom écrit dans vos commentaires'
    }
  };
  var CAT = IS_FR ? STRINGS.fr : STRINGS.en;

  function t(key, vars) {
    var s = Object.prototype.hasOwnProperty.call(CAT, key) ? CAT[key] : (STRINGS.en[key] || key);
    if (vars) {
      s = s.replace(/\{(\w+)\}/g, function (m, name) {
        return Object.prototype.hasOwnProperty.call(vars, name) ? String(vars[name]) : m;
      });
    }
    return s;
  }

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
  function readJSON(el) {
    if (!el) return null;
    try {
      return JSON.parse(el.textContent || '');
    } catch (e) {
      warn('unreadable JSON island', e);
      return null;
    }
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
  function warn() {
    try {
      console.warn.apply(console, ['notabene:'].concat([].slice.call(arguments)));
    } catch (e) { /* no console */ }
  }
  function safely(label, fn) {
    try {
      return fn();
    } catch (e) {
      warn(label, e);
      return undefined;
    }
  }

  /** Creates an element. `props`: class, text, and attributes (always via setAttribute). */
  function h(tag, props) {
    var el = D.createElement(tag);
    if (props) {
      for (var k in props) {
        if (!Object.prototype.hasOwnProperty.call(props, k)) continue;
        var v = props[k];
        if (v === null || v === undefined || v === false) continue;
        if (k === 'class') el.className = v;
        else if (k === 'text') el.textContent = str(v);
        else el.setAttribute(k, v === true ? '' : str(v));
      }
    }
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }
  function append(el, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) {
      child.forEach(function (c) { append(el, c); });
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
    var chars = Array.from(oneLine(s));
    return chars.length > n ? chars.slice(0, n - 1).join('') + '…' : chars.join('');
  }

  var AUTHOR_RE = /^(.*?)\s*<([^<>]+)>\s*$/;
  function displayName(author) {
    var a = str(author).trim();
    var m = AUTHOR_RE.exec(a);
    if (m) return m[1].trim() || m[2].trim();
    return a || t('someone');
  }

  var tsFormat = null;
  function fmtTs(ts) {
    var s = str(ts);
    var d = new Date(s);
    if (!s || isNaN(d.getTime())) return s;
    try {
      tsFormat = tsFormat || new Intl.DateTimeFormat(LANG, { dateStyle: 'medium', timeStyle: 'short' });
      return tsFormat.format(d);
    } catch (e) {
      return d.toISOString();
    }
  }
  var dayFormat = null;
  function fmtDay(day) {
    var s = str(day);
    var d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(s) ? s + 'T00:00:00Z' : s);
    if (!s || isNaN(d.getTime())) return s;
    try {
      dayFormat = dayFormat || new Intl.DateTimeFormat(LANG, { dateStyle: 'medium', timeZone: 'UTC' });
      return dayFormat.format(d);
    } catch (e) {
      return s;
    }
  }

  /** A site-root-relative URL from the data, made relative to this page; unsafe schemes are refused. */
  function siteHref(u) {
    var s = str(u).trim();
    if (!s) return null;
    if (/^[a-z][a-z0-9+.-]*:/i.test(s)) return /^https?:/i.test(s) ? s : null;
    if (s.indexOf('//') === 0) return null;
    if (s.charAt(0) === '/' || s.charAt(0) === '#' || s.charAt(0) === '?') return s;
    return ROOT + s;
  }
  function withParam(url, key, value) {
    var hashAt = url.indexOf('#');
    var base = hashAt >= 0 ? url.slice(0, hashAt) : url;
    var hash = hashAt >= 0 ? url.slice(hashAt) : '';
    var re = new RegExp('([?&])' + key + '=[^&]*');
    var enc = encodeURIComponent(value);
    if (re.test(base)) base = base.replace(re, '$1' + key + '=' + enc);
    else base += (base.indexOf('?') >= 0 ? '&' : '?') + key + '=' + enc;
    return base + hash;
  }

  var STATUS_KEY = { open: 'sOpen', addressed: 'sAddressed', resolved: 'sResolved' };
  function statusOf(c) {
    var s = str(c && c.status);
    return STATUS_KEY[s] ? s : 'open';
  }
  function statusLabel(s) {
    return t(STATUS_KEY[s] || 'sOpen');
  }
  function anch(c) {
    return obj(c && c.anchoring);
  }
  function scopeOf(c) {
    var s = str(c && c.scope);
    if (s === 'page' || s === 'block' || s === 'selection') return s;
    return c && c.anchor && obj(c.anchor).kind ? 'block' : (c && c.anchor ? 'selection' : 'page');
  }
  function repliesText(n) {
    return t(n === 1 ? 'replies1' : 'repliesN', { n: n });
  }

  /** The anchor head of a comment: {icon, text, page: bool}. */
  function anchorHead(c, quoteMax, labelMax) {
    var scope = scopeOf(c);
    var a = obj(c && c.anchor);
    if (scope === 'page') return { icon: '', text: t('pageTag'), page: true };
    if (scope === 'block') {
      var kind = str(a.kind);
      var label = str(a.label) || str(anch(c).text) || str(a.key);
      return { icon: kind === 'mermaid' ? '📊' : '🖼', text: truncate(label, labelMax), page: false };
    }
    return { icon: '', text: truncate(str(a.quote) || str(anch(c).text), quoteMax), page: false };
  }
  function headEl(c, quoteMax, labelMax, extraClass) {
    var hd = anchorHead(c, quoteMax, labelMax);
    if (hd.page) return h('span', { class: 'nb-tag nb-tag-page' + (extraClass ? ' ' + extraClass : ''), text: hd.text });
    return h('span', { class: 'nb-quote-chip' + (extraClass ? ' ' + extraClass : '') },
      hd.icon ? hd.icon + ' ' : '', hd.icon ? hd.text : '“' + hd.text + '”');
  }

  function firstMessage(c) {
    var th = arr(c && c.thread);
    return obj(th[0]);
  }

  /* ----------------------------------------------------------- the thread */

  /** Renders a whole thread (status, hold, messages, resolution). */
  function renderThread(c, opts) {
    opts = opts || {};
    var status = statusOf(c);
    var wrap = h('div', { class: 'nb-thread', 'data-nb-id': str(c.id), 'data-nb-status': status });
    var head = h('div', { class: 'nb-thread-head' },
      h('span', { class: 'nb-status', 'data-nb-status': status, text: statusLabel(status) }));
    if (c.hold === true) head.appendChild(h('span', { class: 'nb-hold', text: '⏸ ' + t('onHold') }));
    if (opts.orphan) head.appendChild(h('span', { class: 'nb-orphan-tag', text: '⚠ ' + t('detached') }));
    wrap.appendChild(head);
    if (opts.quote) {
      var a = obj(c.anchor);
      var scope = scopeOf(c);
      if (scope === 'selection' && (a.quote || anch(c).text)) {
        wrap.appendChild(h('blockquote', { class: 'nb-thread-quote' + (opts.orphan ? ' nb-orphan' : ''),
          text: (opts.orphan ? '⚠ ' : '') + str(a.quote || anch(c).text) }));
      } else if (scope === 'block') {
        wrap.appendChild(h('div', { class: 'nb-thread-quote nb-thread-block' }, headEl(c, 90, 70)));
      }
    }
    if (opts.orphan) wrap.appendChild(h('p', { class: 'nb-note', text: t('detachedLong') }));
    var list = h('ol', { class: 'nb-msgs' });
    arr(c.thread).forEach(function (m) {
      m = obj(m);
      var author = str(m.author);
      var li = h('li', { class: 'nb-msg' },
        h('div', { class: 'nb-msg-head' },
          h('span', { class: 'nb-author', title: author || null, text: displayName(author) }),
          m.ts ? h('time', { class: 'nb-time', datetime: str(m.ts), text: fmtTs(m.ts) }) : null),
        h('div', { class: 'nb-body', text: str(m.body) }));
      list.appendChild(li);
    });
    wrap.appendChild(list);
    var res = obj(c.resolution);
    if (c.resolution && !opts.noResolution && (res.note || status !== 'open')) {
      wrap.appendChild(h('p', { class: 'nb-resolution' },
        h('span', { class: 'nb-resolution-label', text: status === 'addressed' ? t('proposed') : t('resolution') }),
        str(res.note)));
    }
    if (status === 'addressed' && !opts.noReviewLink) {
      wrap.appendChild(h('a', { class: 'nb-validate', href: ROOT + 'review.html', text: t('toValidate') }));
    }
    threadOpts.set(wrap, opts);
    if (W.on && !opts.noActions) wrap.appendChild(threadActions(c));
    return wrap;
  }
  var threadOpts = new WeakMap();

  /* ======================================================== chapter pages */

  var S = {
    comments: new Map(), // id -> comment
    order: [], // comments in island order
    islandOf: new Map(), // id -> island element
    summary: null,
    mode: '',
    marks: new Map(), // id -> [mark elements]
    blocks: new Map(), // id -> host element
    code: new Map(), // id -> {code: element, range: Range|null}
    islands: [], // {el, data}
    filter: 'open',
    pop: null,
    popAnchor: null,
    opener: null,
    panel: null,
    toggle: null,
    discussion: null,
    hasHighlights: !!(window.CSS && CSS.highlights && typeof window.Highlight === 'function')
  };

  function narrow() {
    return !window.matchMedia || window.matchMedia('(max-width: 1023.98px)').matches;
  }

  function located(id) {
    return (S.marks.get(id) || []).length > 0 || S.blocks.has(id) || !!(S.code.get(id) && S.code.get(id).range);
  }
  function isOrphan(c) {
    var scope = scopeOf(c);
    if (scope === 'page') return false;
    if (anch(c).status === 'orphan') return true;
    // Resolved comments are not painted: not an orphan, just not shown in the text.
    if (statusOf(c) === 'resolved') return false;
    return !located(str(c.id));
  }

  function initChapter(islands) {
    islands.forEach(function (el) {
      var data = obj(readJSON(el));
      S.islands.push({ el: el, data: data });
      var sum = obj(data.summary);
      if (typeof sum.open === 'number' || typeof sum.addressed === 'number') S.summary = sum;
      S.mode = str(sum.review || sum.mode || data.review || data.mode || S.mode).toLowerCase();
      arr(data.comments).forEach(function (c) {
        if (!c || typeof c !== 'object' || !str(c.id) || S.comments.has(str(c.id))) return;
        unlean(c, data);
        S.comments.set(str(c.id), c);
        S.order.push(c);
        S.islandOf.set(str(c.id), el);
      });
    });
    safely('marks', setupMarks);
    safely('blocks', setupBlocks);
    safely('code', function () { setupCode(islands); });
    safely('discussion', function () { setupDiscussion(islands); });
    safely('header', setupHeader);
    safely('panel', setupPanel);
    safely('events', setupEvents);
    safely('deep link', setupDeepLink);
  }

  /* ----- marks */

  function setupMarks() {
    D.querySelectorAll('mark.nb-mark[data-nb-id]').forEach(function (m) {
      var id = m.getAttribute('data-nb-id');
      if (!S.marks.has(id)) S.marks.set(id, []);
      S.marks.get(id).push(m);
      var c = S.comments.get(id);
      if (!c) return;
      if (c.hold === true) m.classList.add('nb-held');
      m.setAttribute('tabindex', '0');
      m.setAttribute('role', 'button');
      m.setAttribute('aria-haspopup', 'dialog');
      m.setAttribute('aria-label', t('markLabel', {
        name: displayName(firstMessage(c).author),
        text: truncate(m.textContent, 60),
        status: statusLabel(statusOf(c)) + (c.hold === true ? ', ' + t('onHold') : '')
      }));
    });
  }

  function idsAt(target) {
    var ids = [];
    for (var el = target; el && el !== D.body; el = el.parentElement) {
      if (el.matches && el.matches('mark.nb-mark[data-nb-id]')) {
        var id = el.getAttribute('data-nb-id');
        if (S.comments.has(id) && ids.indexOf(id) < 0) ids.push(id);
      }
    }
    return ids;
  }

  /* ----- blocks (images, diagrams) */

  function liveIds(list) {
    return list.filter(function (id) {
      var c = S.comments.get(id);
      return c && statusOf(c) !== 'resolved';
    });
  }

  function badge(ids, kind) {
    var b = h('button', {
      type: 'button',
      class: 'nb-badge',
      'data-nb-ui': '',
      'data-nb-count': String(ids.length),
      'data-nb-ids': ids.join(' '),
      'aria-haspopup': 'dialog',
      'aria-label': t('badgeLabel', { n: ids.length, kind: kind }),
      title: t('badgeLabel', { n: ids.length, kind: kind })
    });
    return b;
  }
  function hostStatus(ids) {
    var any = function (s) {
      return ids.some(function (id) { var c = S.comments.get(id); return c && statusOf(c) === s; });
    };
    return any('open') ? 'open' : (any('addressed') ? 'addressed' : 'open');
  }

  function setupBlocks() {
    D.querySelectorAll('[data-nb-block]').forEach(function (el) {
      var ids = liveIds(str(el.getAttribute('data-nb-block')).split(/\s+/).filter(Boolean));
      if (!ids.length) return;
      var host = el;
      var isDiagram = el.tagName === 'PRE' || el.classList.contains('mermaid');
      if (isDiagram) {
        // A wrapper carries the badge: the diagram's own text is its source (and its block key).
        host = h('div', { class: 'nb-block-wrap' });
        el.parentNode.insertBefore(host, el);
        host.appendChild(el);
      }
      host.classList.add('nb-block-has');
      host.setAttribute('data-nb-status', hostStatus(ids));
      if (ids.every(function (id) { var c = S.comments.get(id); return c && c.hold === true; })) host.classList.add('nb-held');
      host.appendChild(badge(ids, t(isDiagram ? 'kDiagram' : 'kImage')));
      ids.forEach(function (id) { if (!S.blocks.has(id)) S.blocks.set(id, host); });
    });
  }

  /* ----- code anchors (CSS Custom Highlight API) */

  var codeRepaintQueued = false;
  var codeObservers = [];

  function setupCode(islands) {
    D.querySelectorAll('.nb-code-anchor').forEach(function (a) {
      var p = a.parentElement;
      if (p && p.tagName === 'P' && !p.textContent.trim() &&
          Array.prototype.every.call(p.children, function (ch) { return ch.classList.contains('nb-code-anchor'); })) {
        p.classList.add('nb-code-anchor-host');
      }
    });
    var codeComments = S.order.filter(function (c) {
      return anch(c).code && statusOf(c) !== 'resolved';
    });
    if (!codeComments.length) return;
    // The code blocks of each island's chapter: those before the island and after the previous one.
    var all = Array.prototype.slice.call(D.querySelectorAll('main pre:not(.mermaid) > code'));
    var perIsland = new Map();
    islands.forEach(function (isl, i) {
      var prev = islands[i - 1];
      perIsland.set(isl, all.filter(function (code) {
        var before = isl.compareDocumentPosition(code) & Node.DOCUMENT_POSITION_PRECEDING;
        var afterPrev = !prev || (prev.compareDocumentPosition(code) & Node.DOCUMENT_POSITION_FOLLOWING);
        return before && afterPrev;
      }));
    });
    codeComments.forEach(function (c) {
      var id = str(c.id);
      var spec = obj(anch(c).code);
      var codes = perIsland.get(S.islandOf.get(id)) || all;
      var code = codes[num(spec.block, -1)];
      if (!code) return;
      S.code.set(id, { code: code, spec: spec, range: null });
    });
    paintCode();
    // highlight.js (or anything else) may rebuild the code nodes later: repaint then.
    var seen = new Set();
    S.code.forEach(function (entry) {
      if (seen.has(entry.code)) return;
      seen.add(entry.code);
      var pre = entry.code.parentElement;
      if (pre && !pre.querySelector(':scope > .nb-badge')) {
        var ids = [];
        S.code.forEach(function (e2, id2) { if (e2.code === entry.code) ids.push(id2); });
        pre.classList.add('nb-code-has');
        pre.appendChild(badge(ids, t('kCode')));
      }
      if (window.MutationObserver) {
        var mo = new MutationObserver(queueCodeRepaint);
        mo.observe(entry.code, { childList: true, subtree: true, characterData: true });
        codeObservers.push(mo);
      }
    });
    window.addEventListener('load', queueCodeRepaint);
  }

  function queueCodeRepaint() {
    if (codeRepaintQueued) return;
    codeRepaintQueued = true;
    (window.requestAnimationFrame || setTimeout)(function () {
      codeRepaintQueued = false;
      safely('code repaint', paintCode);
    });
  }

  /** UTF-16 index in `s` of the code-point offset `cp` (the Rust side counts chars). */
  function unitsFromCp(s, cp) {
    var i = 0;
    for (var n = 0; n < cp && i < s.length; n++) {
      var u = s.charCodeAt(i);
      i += (u >= 0xd800 && u <= 0xdbff && i + 1 < s.length) ? 2 : 1;
    }
    return i;
  }
  function rangeFromUnits(root, start, end) {
    var walker = D.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    var pos = 0;
    var range = D.createRange();
    var started = false;
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      var len = node.data.length;
      if (!started && start <= pos + len) {
        if (start === pos + len && len > 0) { pos += len; continue; }
        range.setStart(node, start - pos);
        started = true;
      }
      if (started && end <= pos + len) {
        range.setEnd(node, end - pos);
        return range;
      }
      pos += len;
    }
    return null;
  }
  function codeRange(code, spec) {
    var full = code.textContent || '';
    var text = str(spec.text);
    if (!text) return null;
    var start = unitsFromCp(full, Math.max(0, num(spec.offset, 0)));
    if (full.substr(start, text.length) !== text) {
      // The offset is stale (or counted differently): take the occurrence nearest to it.
      var best = -1;
      for (var i = full.indexOf(text); i >= 0; i = full.indexOf(text, i + 1)) {
        if (best < 0 || Math.abs(i - start) < Math.abs(best - start)) best = i;
      }
      if (best < 0) return null;
      start = best;
    }
    return rangeFromUnits(code, start, start + text.length);
  }

  function paintCode() {
    var ranges = [];
    var addressed = [];
    S.code.forEach(function (entry, id) {
      entry.range = codeRange(entry.code, entry.spec);
      if (!entry.range) return;
      ranges.push(entry.range);
      var c = S.comments.get(id);
      if (c && statusOf(c) === 'addressed') addressed.push(entry.range);
    });
    if (!S.hasHighlights) return;
    CSS.highlights.set('nb-code', new Highlight(...ranges));
    var ha = new Highlight(...addressed);
    ha.priority = 1;
    CSS.highlights.set('nb-code-addressed', ha);
  }

  function codeIdsAt(target, x, y) {
    var code = target.closest && target.closest('pre > code');
    if (!code) return [];
    var ids = [];
    S.code.forEach(function (entry, id) {
      if (entry.code !== code || !entry.range) return;
      var rects = entry.range.getClientRects();
      for (var i = 0; i < rects.length; i++) {
        var r = rects[i];
        if (x >= r.left - 4 && x <= r.right + 4 && y >= r.top - 2 && y <= r.bottom + 2) {
          ids.push(id);
          return;
        }
      }
    });
    return ids;
  }

  /* ----- page discussion */

  function setupDiscussion(islands) {
    islands.forEach(function (isl) {
      var pageComments = S.order.filter(function (c) {
        return scopeOf(c) === 'page' && S.islandOf.get(str(c.id)) === isl;
      });
      if (!pageComments.length) return;
      var live = pageComments.filter(function (c) { return statusOf(c) !== 'resolved'; });
      var done = pageComments.filter(function (c) { return statusOf(c) === 'resolved'; });
      var section = discussionSection(isl);
      var list = section.querySelector('.nb-discussion-list');
      live.forEach(function (c) { list.appendChild(discussionItem(c)); });
      if (done.length) {
        var more = h('details', { class: 'nb-discussion-resolved' },
          h('summary', { text: t('resolvedCount', { n: done.length }) }));
        var l2 = h('ol', { class: 'nb-discussion-list' });
        done.forEach(function (c) { l2.appendChild(discussionItem(c)); });
        more.appendChild(l2);
        section.appendChild(more);
      }
    });
  }
  /** The discussion section of an island's chapter (created, empty, after the island). */
  function discussionSection(isl) {
    var next = isl.nextElementSibling;
    if (next && next.classList.contains('nb-discussion')) return next;
    var section = h('section', {
      class: 'nb-discussion nb-ui',
      id: S.discussion ? null : 'nb-discussion',
      'aria-label': t('pageDiscussion'),
      'data-nb-ui': ''
    });
    section.appendChild(h('div', { class: 'nb-discussion-title', role: 'heading', 'aria-level': '2' },
      '💬 ' + t('pageDiscussion')));
    section.appendChild(h('ol', { class: 'nb-discussion-list' }));
    isl.parentNode.insertBefore(section, isl.nextSibling);
    if (!S.discussion) S.discussion = section;
    return section;
  }
  function discussionItem(c) {
    var li = h('li', { class: 'nb-discussion-item', 'data-nb-id': str(c.id), tabindex: '-1' });
    if (c.hold === true) li.classList.add('nb-held');
    li.appendChild(renderThread(c, {}));
    return li;
  }

  /* ----- header */

  function headerSlot() {
    return D.querySelector('#mdbook-menu-bar .right-buttons') || D.querySelector('.menu-bar .right-buttons');
  }

  function setupHeader() {
    var slot = headerSlot();
    if (!slot) return;
    var box = h('span', { class: 'nb-header nb-ui', 'data-nb-ui': '' });
    var pageOpen = S.order.filter(function (c) { return statusOf(c) !== 'resolved'; }).length;
    var openN = S.summary && typeof S.summary.open === 'number' ? S.summary.open : pageOpen;
    var label = S.summary ? t('openInBook', { n: openN }) : t('openOnPage', { n: openN });
    var toggle = h('button', {
      type: 'button',
      id: 'nb-panel-toggle',
      class: 'icon-button nb-toggle',
      'aria-controls': 'nb-panel',
      'aria-expanded': 'false',
      title: t('togglePanel') + ' — ' + label,
      'aria-label': t('togglePanel') + ' — ' + label
    }, h('span', { class: 'nb-toggle-icon', 'aria-hidden': 'true', text: '💬' }));
    if (openN > 0) toggle.appendChild(h('span', { class: 'nb-count', 'aria-hidden': 'true', text: String(openN) }));
    box.appendChild(toggle);
    S.toggle = toggle;
    var addr = S.summary && typeof S.summary.addressed === 'number'
      ? S.summary.addressed
      : S.order.filter(function (c) { return statusOf(c) === 'addressed'; }).length;
    box.appendChild(reviewLink(addr, S.mode === 'approve'));
    slot.insertBefore(box, slot.firstChild);
  }
  function reviewLink(addressed, force) {
    if (!(addressed > 0) && !force) return null;
    var a = h('a', {
      class: 'nb-review-link',
      href: ROOT + 'review.html',
      title: t('reviewLink', { n: addressed }),
      'aria-label': t('reviewLink', { n: addressed })
    }, h('span', { 'aria-hidden': 'true', text: '✓' }),
    h('span', { class: 'nb-count nb-count-addressed', 'aria-hidden': 'true', text: String(addressed || 0) }));
    return a;
  }

  /* ----- panel */

  var FILTERS = [['open', 'fOpen'], ['addressed', 'fAddressed'], ['resolved', 'fResolved'], ['all', 'fAll']];
  function matchesFilter(c, f) {
    var s = statusOf(c);
    if (f === 'open') return s !== 'resolved';
    if (f === 'all') return true;
    return s === f;
  }
  function railComments() {
    var list = S.order.filter(function (c) { return scopeOf(c) !== 'page'; });
    var pos = function (c) {
      var id = str(c.id);
      var el = (S.marks.get(id) || [])[0] || S.blocks.get(id) || (S.code.get(id) && S.code.get(id).code);
      return el || null;
    };
    return list.map(function (c, i) { return { c: c, el: pos(c), i: i }; }).sort(function (a, b) {
      if (a.el && b.el && a.el !== b.el) {
        return a.el.compareDocumentPosition(b.el) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1;
      }
      if (a.el && !b.el) return -1;
      if (!a.el && b.el) return 1;
      return a.i - b.i;
    }).map(function (x) { return x.c; });
  }

  function setupPanel() {
    var panel = h('aside', {
      id: 'nb-panel',
      class: 'nb-panel nb-ui',
      'data-nb-ui': '',
      'aria-label': t('panelTitle'),
      hidden: true
    });
    var close = h('button', { type: 'button', class: 'nb-close', 'aria-label': t('close'), title: t('close'), text: '×' });
    close.addEventListener('click', function () { setPanel(false, true); });
    panel.appendChild(h('div', { class: 'nb-panel-head' },
      h('h2', { class: 'nb-panel-title', text: t('panelTitle') }), close));
    var filters = h('div', { class: 'nb-filters', role: 'group', 'aria-label': t('filters') });
    FILTERS.forEach(function (f) {
      var b = h('button', { type: 'button', class: 'nb-filter', 'data-filter': f[0], 'aria-pressed': 'false' });
      b.addEventListener('click', function () { S.filter = f[0]; renderPanelList(); });
      filters.appendChild(b);
    });
    panel.appendChild(filters);
    panel.appendChild(h('p', { class: 'nb-panel-empty', hidden: true }));
    panel.appendChild(h('ol', { class: 'nb-list' }));
    var foot = h('div', { class: 'nb-panel-foot' });
    var pageN = S.order.filter(function (c) { return scopeOf(c) === 'page' && statusOf(c) !== 'resolved'; }).length;
    if (S.discussion) {
      var dl = h('a', { class: 'nb-discussion-link', href: '#nb-discussion', text: t('pageDiscussionLink', { n: pageN }) });
      dl.addEventListener('click', function (e) {
        e.preventDefault();
        if (narrow()) setPanel(false);
        S.discussion.scrollIntoView({ block: 'start' });
        flash([S.discussion]);
      });
      foot.appendChild(dl);
    }
    foot.appendChild(h('a', { class: 'nb-all-link', href: ROOT + 'comments.html', text: t('allComments') + ' →' }));
    panel.appendChild(foot);
    D.body.appendChild(panel);
    S.panel = panel;
    renderPanelList();

    var stored = null;
    try { stored = localStorage.getItem('notabene:panel'); } catch (e) { /* storage off */ }
    var hasLive = S.order.some(function (c) { return scopeOf(c) !== 'page' && statusOf(c) !== 'resolved'; });
    var open = !narrow() && (stored ? stored === 'open' : hasLive);
    setPanel(open, false);
    if (S.toggle) {
      S.toggle.addEventListener('click', function () { setPanel(S.panel.hidden, true); });
    }
    if (window.matchMedia) {
      var mq = window.matchMedia('(max-width: 1023.98px)');
      var onChange = function () {
        if (mq.matches && !S.panel.hidden) setPanel(false, false);
        HTML.classList.toggle('nb-panel-docked', !S.panel.hidden && !mq.matches);
      };
      if (mq.addEventListener) mq.addEventListener('change', onChange);
    }
  }

  function setPanel(open, remember) {
    if (!S.panel) return;
    S.panel.hidden = !open;
    HTML.classList.toggle('nb-panel-open', open);
    HTML.classList.toggle('nb-panel-docked', open && !narrow());
    if (S.toggle) S.toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
    if (remember && !narrow()) {
      try { localStorage.setItem('notabene:panel', open ? 'open' : 'closed'); } catch (e) { /* storage off */ }
    }
    if (open && narrow() && remember) {
      var first = S.panel.querySelector('.nb-filter[aria-pressed="true"]') || S.panel.querySelector('button');
      if (first) first.focus();
    }
    if (!open && remember && S.toggle && S.panel.contains(D.activeElement)) S.toggle.focus();
  }

  function renderPanelList() {
    if (!S.panel) return;
    var all = railComments();
    S.panel.querySelectorAll('.nb-filter').forEach(function (b) {
      var f = b.getAttribute('data-filter');
      var n = all.filter(function (c) { return matchesFilter(c, f); }).length;
      var key = FILTERS.filter(function (x) { return x[0] === f; })[0][1];
      b.textContent = '';
      append(b, [t(key) + ' ', h('span', { class: 'nb-filter-count', text: String(n) })]);
      b.setAttribute('aria-pressed', f === S.filter ? 'true' : 'false');
    });
    var list = S.panel.querySelector('.nb-list');
    list.textContent = '';
    var shown = all.filter(function (c) { return matchesFilter(c, S.filter); });
    shown.forEach(function (c) { list.appendChild(panelEntry(c)); });
    var empty = S.panel.querySelector('.nb-panel-empty');
    empty.hidden = shown.length > 0;
    empty.textContent = all.length ? t('noneForFilter') : t('noneOnPage');
  }

  function panelEntry(c) {
    var id = str(c.id);
    var status = statusOf(c);
    var orphan = isOrphan(c);
    var li = h('li', {
      class: 'nb-entry' + (orphan ? ' nb-orphan' : '') + (c.hold === true ? ' nb-held' : ''),
      'data-nb-id': id,
      'data-nb-status': status
    });
    var fm = firstMessage(c);
    var n = arr(c.thread).length;
    var chip = headEl(c, 90, 70, orphan ? 'nb-orphan' : '');
    if (orphan) chip.insertBefore(D.createTextNode('⚠ '), chip.firstChild);
    var main = h('button', { type: 'button', class: 'nb-entry-main', 'aria-expanded': 'false' },
      h('span', { class: 'nb-entry-top' },
        h('span', { class: 'nb-dot', 'data-nb-status': status, title: statusLabel(status) }),
        chip),
      h('span', { class: 'nb-entry-meta' },
        h('span', { class: 'nb-author', text: displayName(fm.author) }),
        n > 1 ? h('span', { class: 'nb-replies', text: ' · ' + repliesText(n - 1) }) : null,
        c.hold === true ? h('span', { class: 'nb-hold', text: ' ⏸ ' + t('onHold') }) : null,
        status !== 'open' ? h('span', { class: 'nb-status-text', text: ' · ' + statusLabel(status) }) : null),
      h('span', { class: 'nb-entry-first', text: truncate(fm.body, 140) }));
    var body = h('div', { class: 'nb-entry-thread', hidden: true });
    main.addEventListener('click', function () {
      var expand = body.hidden;
      if (located(id) && statusOf(c) !== 'resolved') {
        if (narrow()) {
          setPanel(false, false);
          var el = jumpTo(id);
          openThread([id], el || S.toggle);
          return;
        }
        jumpTo(id);
      }
      setExpanded(li, expand);
    });
    li.appendChild(main);
    li.appendChild(body);
    return li;
  }
  function setExpanded(li, expand) {
    var body = li.querySelector('.nb-entry-thread');
    var main = li.querySelector('.nb-entry-main');
    var c = S.comments.get(li.getAttribute('data-nb-id'));
    if (expand && !body.firstChild && c) body.appendChild(renderThread(c, { orphan: isOrphan(c), quote: isOrphan(c) }));
    body.hidden = !expand;
    main.setAttribute('aria-expanded', expand ? 'true' : 'false');
  }

  /* ----- flash, jump */

  var flashTimers = new WeakMap();
  function flash(els, ms) {
    els.forEach(function (el) {
      if (!el) return;
      el.classList.remove('nb-flash');
      void el.offsetWidth; // restart the animation
      el.classList.add('nb-flash');
      clearTimeout(flashTimers.get(el));
      flashTimers.set(el, setTimeout(function () { el.classList.remove('nb-flash'); }, ms || 2500));
    });
  }
  var codeFlashTimer = 0;
  function flashCode(range, ms) {
    if (!S.hasHighlights || !range) return;
    CSS.highlights.set('nb-code-flash', Object.assign(new Highlight(range), { priority: 2 }));
    clearTimeout(codeFlashTimer);
    codeFlashTimer = setTimeout(function () { CSS.highlights.delete('nb-code-flash'); }, ms || 2500);
  }

  /** Scrolls to and flashes a comment's place. Returns the element to anchor its thread to. */
  function jumpTo(id, ms) {
    var c = S.comments.get(id);
    var marks = S.marks.get(id) || [];
    if (marks.length) {
      marks[0].scrollIntoView({ block: 'center' });
      flash(marks, ms);
      return marks[0];
    }
    if (S.blocks.has(id)) {
      var host = S.blocks.get(id);
      host.scrollIntoView({ block: 'center' });
      flash([host], ms);
      return host.querySelector('.nb-badge') || host;
    }
    var ce = S.code.get(id);
    if (ce && ce.range) {
      var pre = ce.code.parentElement || ce.code;
      var r = ce.range.getBoundingClientRect();
      window.scrollBy(0, r.top - window.innerHeight / 2);
      flashCode(ce.range, ms);
      flash([pre], ms);
      return pre.querySelector('.nb-badge') || pre;
    }
    if (c && scopeOf(c) === 'page') {
      var item = D.querySelector('.nb-discussion-item[data-nb-id="' + cssEscape(id) + '"]');
      if (item) {
        var det = item.closest('details');
        if (det) det.open = true;
        item.scrollIntoView({ block: 'center' });
        flash([item], ms);
        return item;
      }
    }
    return null;
  }
  function cssEscape(s) {
    return window.CSS && CSS.escape ? CSS.escape(s) : str(s).replace(/[^\w-]/g, '\\$&');
  }

  /** Shows a comment that has no place in the text (orphan, resolved) in the panel. */
  function revealInPanel(id, ms) {
    if (!S.panel) return null;
    var c = S.comments.get(id);
    if (c && !matchesFilter(c, S.filter)) { S.filter = 'all'; renderPanelList(); }
    setPanel(true, false);
    var li = S.panel.querySelector('.nb-entry[data-nb-id="' + cssEscape(id) + '"]');
    if (!li) return null;
    setExpanded(li, true);
    li.scrollIntoView({ block: 'nearest' });
    flash([li], ms);
    return li.querySelector('.nb-entry-main');
  }

  /* ----- the popover / bottom sheet */

  function closeThread(restoreFocus) {
    if (!S.pop) return;
    var pop = S.pop;
    var opener = S.opener;
    S.pop = null;
    S.popAnchor = null;
    S.opener = null;
    pop.remove();
    D.querySelectorAll('.nb-active').forEach(function (el) { el.classList.remove('nb-active'); });
    if (restoreFocus && opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
  }

  /** Opens the threads of `ids` near `opener` (popover) or as a bottom sheet on narrow screens. */
  function openThread(ids, opener, rectFn) {
    closeThread(false);
    ids = ids.filter(function (id) { return S.comments.has(id); });
    if (!ids.length) return;
    var title = ids.length === 1 ? t('comment') : t('nComments', { n: ids.length });
    var close = h('button', { type: 'button', class: 'nb-close', 'aria-label': t('close'), title: t('close'), text: '×' });
    var pop = h('div', {
      class: 'nb-pop nb-ui',
      'data-nb-ui': '',
      role: 'dialog',
      'aria-label': title,
      tabindex: '-1'
    }, h('div', { class: 'nb-pop-head' }, h('span', { class: 'nb-pop-title', text: title }), close));
    var body = h('div', { class: 'nb-pop-body' });
    ids.forEach(function (id) {
      var c = S.comments.get(id);
      body.appendChild(renderThread(c, { quote: true, orphan: isOrphan(c) }));
      (S.marks.get(id) || []).forEach(function (m) { m.classList.add('nb-active'); });
    });
    pop.appendChild(body);
    close.addEventListener('click', function () { closeThread(true); });
    D.body.appendChild(pop);
    S.pop = pop;
    S.opener = opener || null;
    S.popAnchor = rectFn || (opener ? function () { return opener.getBoundingClientRect(); } : null);
    placePop();
    pop.focus({ preventScroll: true });
  }

  function placePop() {
    if (S.pop) placeFloating(S.pop, S.popAnchor, S.opener);
    if (W.compose) placeFloating(W.compose.pop, W.compose.rect, null);
  }
  /** Places a popover under (or above) `rectFn()`, or as a bottom sheet on narrow screens. */
  function placeFloating(pop, rectFn, opener) {
    if (!pop) return;
    if (narrow()) {
      pop.classList.add('nb-sheet');
      pop.style.left = '';
      pop.style.top = '';
      // Keep the commented text visible above the sheet.
      if (rectFn) {
        var ar = rectFn();
        var sheetTop = window.innerHeight - pop.offsetHeight;
        if (ar && (ar.bottom > sheetTop - 8 || ar.top < 0)) window.scrollBy(0, ar.top - Math.max(60, sheetTop / 3));
      }
      return;
    }
    pop.classList.remove('nb-sheet');
    var r = rectFn ? rectFn() : null;
    var vw = HTML.clientWidth;
    var vh = window.innerHeight;
    var w = pop.offsetWidth;
    var ph = pop.offsetHeight;
    // Under a badge, the popover hangs from the badge's right edge; elsewhere it starts at the text.
    var left = r ? (opener && opener.classList && opener.classList.contains('nb-badge') ? r.right - w : r.left) : (vw - w) / 2;
    var top = r ? r.bottom + 8 : vh / 4;
    var maxRight = vw - 8 - (S.panel && !S.panel.hidden && !narrow() ? S.panel.offsetWidth : 0);
    left = Math.max(8, Math.min(left, maxRight - w));
    if (r && top + ph > vh - 8 && r.top - ph - 8 > 8) top = r.top - ph - 8;
    pop.style.left = Math.round(left + window.scrollX) + 'px';
    pop.style.top = Math.round(top + window.scrollY) + 'px';
  }

  /* ----- events */

  function setupEvents() {
    D.addEventListener('click', function (e) {
      var target = e.target;
      if (!(target instanceof Element)) return;
      if (target.closest('.nb-pop')) return;
      if (target.closest('[data-nb-ui]') && !target.closest('.nb-badge')) return;
      var b = target.closest('.nb-badge[data-nb-ids]');
      if (b) {
        e.preventDefault();
        e.stopPropagation();
        openThread(str(b.getAttribute('data-nb-ids')).split(/\s+/).filter(Boolean), b);
        return;
      }
      if (target.closest('a[href], button, input, textarea, select, label.checkbox-label img')) {
        if (!target.closest('mark.nb-mark') || target.closest('a[href]')) return;
      }
      var sel = window.getSelection ? window.getSelection() : null;
      if (sel && sel.rangeCount && !sel.isCollapsed && String(sel).trim()) return; // a drag that selected text
      var ids = idsAt(target);
      if (ids.length) {
        var mark = target.closest('mark.nb-mark');
        var x = e.clientX, y = e.clientY;
        openThread(ids, mark, function () { return rectNear(mark, x, y); });
        return;
      }
      if (S.code.size) {
        var cids = codeIdsAt(target, e.clientX, e.clientY);
        if (cids.length) {
          var entry = S.code.get(cids[0]);
          var pre = entry.code.parentElement;
          openThread(cids, pre.querySelector('.nb-badge') || pre, function () {
            return entry.range ? entry.range.getBoundingClientRect() : pre.getBoundingClientRect();
          });
          return;
        }
      }
    }, false);

    D.addEventListener('pointerdown', function (e) {
      if (!S.pop) return;
      var target = e.target;
      if (!(target instanceof Element)) return;
      if (S.pop.contains(target) || target.closest('mark.nb-mark, .nb-badge, .nb-entry, #nb-panel-toggle')) return;
      closeThread(false);
    }, true);

    D.addEventListener('keydown', function (e) {
      var target = e.target;
      if (e.key === 'Escape') {
        if (S.pop) {
          e.preventDefault();
          closeThread(true);
          return;
        }
        if (S.panel && !S.panel.hidden && narrow()) {
          e.preventDefault();
          setPanel(false, true);
          if (S.toggle) S.toggle.focus();
        }
        return;
      }
      if ((e.key === 'Enter' || e.key === ' ' || e.key === 'Spacebar') && target instanceof Element &&
          target.matches('mark.nb-mark[data-nb-id]')) {
        e.preventDefault();
        var ids = idsAt(target);
        if (ids.length) openThread(ids, target);
      }
    });

    D.addEventListener('mouseover', function (e) {
      var m = e.target instanceof Element && e.target.closest('mark.nb-mark[data-nb-id]');
      hoverGroup(m ? m.getAttribute('data-nb-id') : null);
    });

    var resizeQueued = false;
    window.addEventListener('resize', function () {
      if (resizeQueued) return;
      resizeQueued = true;
      (window.requestAnimationFrame || setTimeout)(function () {
        resizeQueued = false;
        placePop();
      });
    });
  }

  var hovered = null;
  function hoverGroup(id) {
    if (hovered === id) return;
    if (hovered) (S.marks.get(hovered) || []).forEach(function (m) { m.classList.remove('nb-hover'); });
    hovered = id;
    if (id) (S.marks.get(id) || []).forEach(function (m) { m.classList.add('nb-hover'); });
  }
  function rectNear(el, x, y) {
    var rects = el.getClientRects();
    for (var i = 0; i < rects.length; i++) {
      var r = rects[i];
      if (x >= r.left - 4 && x <= r.right + 4 && y >= r.top - 10 && y <= r.bottom + 10) return r;
    }
    return el.getBoundingClientRect();
  }

  /* ----- deep links: ?nb=ID (and notabene's ?c=ID) */

  function setupDeepLink() {
    var params;
    try { params = new URLSearchParams(window.location.search); } catch (e) { return; }
    var id = params.get('nb') || params.get('c');
    if (!id || !S.comments.has(id)) return;
    if (W.restoring) return; // a live reload: the reader's scroll position wins
    var done = false;
    var go = function () {
      if (done) return;
      done = true;
      safely('deep link', function () { openDeepLink(id); });
    };
    if (D.readyState === 'complete') go();
    else {
      window.addEventListener('load', go);
      setTimeout(go, 1500);
    }
  }
  function openDeepLink(id) {
    var c = S.comments.get(id);
    var scope = scopeOf(c);
    if (scope !== 'page' && (!located(id) || statusOf(c) === 'resolved')) {
      var entry = revealInPanel(id, 2500);
      if (entry) entry.focus({ preventScroll: true });
      return;
    }
    var el = jumpTo(id, 2500);
    if (!el) return;
    if (scope === 'page') {
      el.focus({ preventScroll: true });
      return;
    }
    var ce = S.code.get(id);
    openThread([id], el, ce && ce.range ? function () { return ce.range.getBoundingClientRect(); } : null);
  }

  /* ========================================================= generated views */

  function initView(app, data) {
    var view = app.getAttribute('data-nb-view') || str(data.view);
    app.classList.add('nb-ui');
    app.textContent = '';
    if (view === 'review') renderReview(app, data);
    else if (view === 'comments') renderCommentsView(app, data);
    else if (view === 'journal') renderJournal(app, data);
    return view;
  }

  function viewHeader(view, data) {
    var slot = headerSlot();
    if (!slot || slot.querySelector('.nb-header')) return;
    var addressed = 0;
    var force = false;
    if (view === 'review') {
      addressed = arr(data.cards).length;
      force = str(data.mode).toLowerCase() === 'approve';
    } else if (view === 'comments') {
      addressed = arr(data.comments).filter(function (c) { return statusOf(c) === 'addressed'; }).length;
    }
    var link = reviewLink(addressed, force);
    if (!link) return;
    slot.insertBefore(h('span', { class: 'nb-header nb-ui', 'data-nb-ui': '' }, link), slot.firstChild);
  }

  /* ----- review */

  var diffViews = []; // {el, lines} re-rendered when the mode changes
  function diffMode() {
    if (window.matchMedia && window.matchMedia('(max-width: 639.98px)').matches) return 'unified';
    var m = null;
    try { m = localStorage.getItem('notabene:diffMode'); } catch (e) { /* storage off */ }
    return m === 'split' ? 'split' : 'unified';
  }

  function renderReview(app, data) {
    var cards = arr(data.cards);
    var mode = str(data.mode).toLowerCase();
    var root = h('div', { class: 'nb-review' });
    root.appendChild(h('p', { class: 'nb-view-intro', text: mode === 'approve' ? t('modeApprove') : t('modeAuto') }));
    if (!cards.length) {
      root.appendChild(h('p', { class: 'nb-empty nb-nothing', text: t('nothingToValidate') }));
      app.appendChild(root);
      return;
    }
    var toolbar = h('div', { class: 'nb-review-toolbar' },
      h('span', { class: 'nb-count-text', text: t('cardsCount', { n: cards.length }) }));
    var modes = h('div', { class: 'nb-diff-modes', role: 'group', 'aria-label': t('diffView') });
    [['unified', 'unified'], ['split', 'split']].forEach(function (m) {
      var b = h('button', { type: 'button', class: 'nb-diff-mode', 'data-mode': m[0], 'aria-pressed': 'false', text: t(m[1]) });
      b.addEventListener('click', function () {
        try { localStorage.setItem('notabene:diffMode', m[0]); } catch (e) { /* storage off */ }
        refreshDiffs();
      });
      modes.appendChild(b);
    });
    toolbar.appendChild(modes);
    root.appendChild(toolbar);
    var commands = obj(data.commands);
    cards.forEach(function (card) {
      safely('review card', function () { root.appendChild(reviewCard(obj(card), commands)); });
    });
    app.appendChild(root);
    refreshDiffs();
    if (window.matchMedia) {
      var mq = window.matchMedia('(max-width: 639.98px)');
      if (mq.addEventListener) mq.addEventListener('change', refreshDiffs);
    }
  }

  function refreshDiffs() {
    var mode = diffMode();
    var forced = window.matchMedia && window.matchMedia('(max-width: 639.98px)').matches;
    D.querySelectorAll('.nb-diff-mode').forEach(function (b) {
      b.setAttribute('aria-pressed', b.getAttribute('data-mode') === mode ? 'true' : 'false');
      b.disabled = !!forced;
    });
    diffViews.forEach(function (v) {
      v.el.textContent = '';
      v.el.setAttribute('data-mode', mode);
      v.el.appendChild(mode === 'split' ? splitTable(v.lines) : unifiedTable(v.lines));
    });
  }

  function reviewCard(card, commands) {
    var c = obj(card.comment);
    var id = str(c.id);
    var url = siteHref(c.url || anch(c).url);
    var art = h('article', { class: 'nb-card', 'data-nb-id': id, 'data-nb-status': statusOf(c) });
    var pageText = str(anch(c).chapter) || str(c.page);
    art.appendChild(h('header', { class: 'nb-card-head' },
      url ? h('a', { class: 'nb-card-page', href: url, text: pageText }) : h('span', { class: 'nb-card-page', text: pageText }),
      headEl(c, 90, 70, 'nb-card-anchor')));
    art.appendChild(renderThread(c, { noReviewLink: true, noResolution: true, noActions: true }));
    var note = card.note !== null && card.note !== undefined ? str(card.note) : str(obj(c.resolution).note);
    if (note) {
      art.appendChild(h('p', { class: 'nb-proposed' },
        h('span', { class: 'nb-resolution-label', text: t('proposed') }), note));
    }
    var entry = card.entry && typeof card.entry === 'object' ? card.entry : null;
    if (entry) {
      art.appendChild(h('p', { class: 'nb-entry-ref' },
        h('span', { class: 'nb-resolution-label', text: t('journalEntry') }),
        h('a', { href: ROOT + 'journal.html', text: str(entry.title) || str(entry.id) }),
        entry.date ? ' (' + fmtDay(entry.date) + ')' : '',
        entry.summary ? h('span', { class: 'nb-entry-summary', text: ' — ' + str(entry.summary) }) : null));
    }
    var problem = str(card.problem);
    if (problem) {
      var detail = { 'no-journal-link': 'pNoLink', 'unknown-journal-entry': 'pUnknownEntry', 'not-in-journal-changes': 'pNotInChanges' }[problem];
      art.appendChild(h('p', { class: 'nb-problem', 'data-problem': problem },
        h('strong', { text: t('noChanges') }), detail ? ' — ' + t(detail) : ''));
    }
    arr(card.changes).forEach(function (ch) {
      safely('change', function () { art.appendChild(changeBlock(obj(ch))); });
    });
    art.appendChild(cardActions(id, url, commands, c));
    return art;
  }

  function changeBlock(ch) {
    var sec = h('section', { class: 'nb-change' });
    var url = siteHref(ch.url);
    var page = str(ch.page) || str(ch.file);
    var title = h('h4', { class: 'nb-change-head' },
      url ? h('a', { href: url, text: page }) : page,
      ch.what ? ' — ' + str(ch.what) : '');
    sec.appendChild(title);
    if (ch.why) sec.appendChild(h('p', { class: 'nb-why', text: str(ch.why) }));
    sec.appendChild(diffBlock(obj(ch.diff), ch.file));
    var also = arr(ch.also);
    if (also.length) {
      var p = h('p', { class: 'nb-also' }, t('alsoCarries'));
      also.forEach(function (a, i) {
        a = obj(a);
        var snip = '“' + truncate(a.snippet, 40) + '”';
        var href = siteHref(a.url);
        if (i) p.appendChild(D.createTextNode(', '));
        p.appendChild(href ? h('a', { href: href, title: str(a.id), text: snip }) : h('span', { title: str(a.id), text: snip }));
      });
      sec.appendChild(p);
    }
    return sec;
  }

  function diffBlock(diff, file) {
    var wrap = h('div', { class: 'nb-diff-wrap' });
    var source = str(diff.source);
    var text = str(diff.text);
    var reason = str(diff.reason);
    var label = '';
    if (source === 'commit') label = t('diffCommit', { ref: str(diff.ref).slice(0, 12) || '?' });
    else if (source === 'worktree') label = t('diffWorktree');
    if (file || label) {
      wrap.appendChild(h('div', { class: 'nb-diff-meta' },
        file ? h('code', { class: 'nb-diff-file', text: str(file) }) : null,
        label ? h('span', { class: 'nb-diff-source', text: (file ? ' · ' : '') + label }) : null));
    }
    if (source === 'untracked') wrap.appendChild(h('p', { class: 'nb-diff-note', text: t('untracked') }));
    var lines = text ? parseDiff(text) : [];
    if (!lines.length) {
      var key = { 'no-git': 'noGit', unchanged: 'unchanged', 'page-not-found': 'pageNotFound', 'unknown-ref': 'unknownRef' }[reason] || 'noDiff';
      wrap.appendChild(h('p', { class: 'nb-diff-empty', 'data-reason': reason || source || 'none', text: t(key) }));
      return wrap;
    }
    var box = h('div', { class: 'nb-diff' });
    wrap.appendChild(box);
    diffViews.push({ el: box, lines: lines });
    return wrap;
  }

  /** Parses a unified diff into hunk / add / del / ctx / note lines; file headers are dropped. */
  function parseDiff(text) {
    var out = [];
    var inHunk = false;
    var oldLeft = 0, newLeft = 0, oldNo = 0, newNo = 0;
    var src = text.split('\n');
    if (src.length && src[src.length - 1] === '') src.pop();
    src.forEach(function (raw) {
      var line = raw.replace(/\r$/, '');
      var m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/.exec(line);
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
        var sign = line.charAt(0);
        var body = line.slice(1);
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
    var tb = h('tbody');
    lines.forEach(function (l) {
      if (l.type === 'hunk' || l.type === 'note') {
        tb.appendChild(diffRow('nb-d-' + l.type, [h('td', { class: 'nb-d-full', colspan: '4', text: l.text })]));
        return;
      }
      var sign = l.type === 'add' ? '+' : (l.type === 'del' ? '-' : ' ');
      tb.appendChild(diffRow('nb-d-' + l.type, [td('nb-ln', l.o), td('nb-ln', l.n), td('nb-sign', sign), td('nb-code', l.text)]));
    });
    return h('table', { class: 'nb-diff-table nb-diff-unified' }, tb);
  }
  function splitTable(lines) {
    var tb = h('tbody');
    var i = 0;
    var cell = function (l, side) {
      if (!l) return [td('nb-ln nb-d-none', ''), td('nb-code nb-d-none', '')];
      var cls = l.type === 'ctx' ? 'nb-d-ctx' : 'nb-d-' + l.type;
      return [td('nb-ln ' + cls, side === 'left' ? l.o : l.n), td('nb-code ' + cls, l.text)];
    };
    while (i < lines.length) {
      var l = lines[i];
      if (l.type === 'hunk' || l.type === 'note') {
        tb.appendChild(diffRow('nb-d-' + l.type, [h('td', { class: 'nb-d-full', colspan: '4', text: l.text })]));
        i++;
      } else if (l.type === 'ctx') {
        tb.appendChild(diffRow('nb-d-ctx', cell(l, 'left').concat(cell(l, 'right'))));
        i++;
      } else {
        var dels = [], adds = [];
        while (i < lines.length && lines[i].type === 'del') dels.push(lines[i++]);
        while (i < lines.length && lines[i].type === 'add') adds.push(lines[i++]);
        for (var k = 0; k < Math.max(dels.length, adds.length); k++) {
          tb.appendChild(diffRow('nb-d-pair', cell(dels[k], 'left').concat(cell(adds[k], 'right'))));
        }
      }
    }
    return h('table', { class: 'nb-diff-table nb-diff-split' }, tb);
  }

  /** POSIX shell single-quoting. */
  function shQuote(s) {
    return "'" + str(s).replace(/'/g, "'\\''") + "'";
  }
  function fillCommand(template, id, reason) {
    var safeId = /^[A-Za-z0-9_.-]+$/.test(id) ? id : shQuote(id);
    var s = str(template);
    s = s.replace(/"\{id\}"|'\{id\}'|\{id\}/g, function () { return safeId; });
    if (reason !== undefined) {
      s = s.replace(/"\{reason\}"|'\{reason\}'|\{reason\}/g, function () { return shQuote(reason); });
    }
    return s;
  }

  function cardActions(id, url, commands, c) {
    var box = h('div', { class: 'nb-card-actions' });
    var row = h('div', { class: 'nb-actions-row' });
    if (url) row.appendChild(h('a', { class: 'nb-btn nb-btn-link', href: url, text: t('viewInPage') }));
    var rejectB = h('button', { type: 'button', class: 'nb-btn nb-reject', 'aria-expanded': 'false', text: t('reject') });
    var approveB = h('button', { type: 'button', class: 'nb-btn nb-approve', 'aria-expanded': 'false', text: t('approve') });
    row.appendChild(rejectB);
    row.appendChild(approveB);
    box.appendChild(row);
    var reasonBox = h('textarea', { class: 'nb-reason', rows: '3', placeholder: t('reasonPlaceholder'), 'aria-label': t('reasonPlaceholder'), hidden: true });
    var cmdBox = h('div', { class: 'nb-cmd', hidden: true });
    var cmdCode = h('code', { class: 'nb-cmd-text' });
    var copyB = h('button', { type: 'button', class: 'nb-btn nb-copy', text: t('copy') });
    cmdBox.appendChild(h('p', { class: 'nb-note', text: t('staticNote') }));
    cmdBox.appendChild(h('div', { class: 'nb-cmd-row' }, h('pre', { class: 'nb-cmd-pre' }, cmdCode), copyB));
    // Write mode (serve): the reason is sent as a reply; the decision is written at once.
    var sendB = h('button', { type: 'button', class: 'nb-btn nb-reject-send', text: t('sendReject') });
    var sendRow = h('div', { class: 'nb-actions-row nb-reject-row', hidden: true }, sendB);
    var msg = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    var done = h('p', { class: 'nb-done', role: 'status', hidden: true });
    box.appendChild(reasonBox);
    box.appendChild(sendRow);
    box.appendChild(cmdBox);
    box.appendChild(msg);
    box.appendChild(done);
    var current = null;
    var approveTpl = str(commands.approve) || 'notabene comments done {id} --status resolved';
    var rejectTpl = str(commands.reject) || 'notabene comments reopen {id} --reply "{reason}"';
    var page = str(c && c.page);
    var show = function (which) {
      current = which;
      approveB.setAttribute('aria-expanded', which === 'approve' && !W.on ? 'true' : 'false');
      rejectB.setAttribute('aria-expanded', which === 'reject' ? 'true' : 'false');
      reasonBox.hidden = which !== 'reject';
      if (W.on) {
        reasonBox.setAttribute('data-nb-draft', '');
        sendRow.hidden = which !== 'reject';
        cmdBox.hidden = true;
      } else {
        cmdBox.hidden = !which;
      }
      update();
    };
    var update = function () {
      cmdCode.textContent = current === 'reject' ? fillCommand(rejectTpl, id, reasonBox.value) : fillCommand(approveTpl, id);
      copyB.textContent = t('copy');
    };
    var decide = function (fields, doneText, button) {
      withAuthor(function (author) {
        fields.page = page;
        fields.id = id;
        fields.author = author;
        if (fields.reply) fields.reply.author = author;
        busy([approveB, rejectB, sendB], true);
        showError(msg, null);
        api('PATCH', 'comments', fields).then(function (updated) {
          reasonBox.value = '';
          var art = box.closest('.nb-card');
          if (art) {
            art.classList.add('nb-card-done');
            art.setAttribute('data-nb-status', statusOf(updated));
          }
          done.textContent = doneText;
          done.hidden = false;
          reasonBox.hidden = true;
          sendRow.hidden = true;
          wroteSomething();
        }, function (e) {
          busy([approveB, rejectB, sendB], false);
          showError(msg, e);
          if (button) button.focus();
        });
      }, button);
    };
    approveB.addEventListener('click', function () {
      if (W.on && page) {
        show(null);
        decide({ status: 'resolved' }, t('approvedDone'), approveB);
        return;
      }
      show(current === 'approve' ? null : 'approve');
    });
    rejectB.addEventListener('click', function () {
      show(current === 'reject' ? null : 'reject');
      if (current === 'reject') reasonBox.focus();
    });
    sendB.addEventListener('click', function () {
      var reason = reasonBox.value.trim();
      if (!reason) {
        showError(msg, t('needReason'));
        reasonBox.focus();
        return;
      }
      decide({ status: 'open', reply: { body: reason } }, t('rejectedDone'), sendB);
    });
    reasonBox.addEventListener('keydown', function (e) {
      if (W.on && e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        sendB.click();
      }
    });
    reasonBox.addEventListener('input', update);
    copyB.addEventListener('click', function () { copyText(cmdCode.textContent, cmdCode, copyB); });
    return box;
  }

  function copyText(text, node, button) {
    var ok = function () { button.textContent = t('copied'); };
    var fallback = function () {
      try {
        var sel = window.getSelection();
        var r = D.createRange();
        r.selectNodeContents(node);
        sel.removeAllRanges();
        sel.addRange(r);
        if (D.execCommand && D.execCommand('copy')) ok();
        else button.textContent = t('copyFailed');
      } catch (e) {
        button.textContent = t('copyFailed');
      }
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(ok, fallback);
    } else {
      fallback();
    }
  }

  /* ----- comments view */

  function renderCommentsView(app, data) {
    var all = arr(data.comments).filter(function (c) { return c && typeof c === 'object'; });
    all.forEach(function (c) { unlean(c, data); });
    var root = h('div', { class: 'nb-comments-view' });
    var search = h('input', { type: 'search', class: 'nb-search', placeholder: t('searchPlaceholder'), 'aria-label': t('search') });
    var status = h('select', { class: 'nb-f-status', 'aria-label': t('status') });
    [['active', 'sActive'], ['open', 'fOpen'], ['addressed', 'fAddressed'], ['resolved', 'fResolved'], ['all', 'fAll']].forEach(function (o) {
      status.appendChild(h('option', { value: o[0], text: t(o[1]) }));
    });
    var hold = h('select', { class: 'nb-f-hold', 'aria-label': t('hold') });
    [['all', 'holdAll'], ['held', 'held'], ['not', 'notHeld']].forEach(function (o) {
      hold.appendChild(h('option', { value: o[0], text: t(o[1]) }));
    });
    var page = h('select', { class: 'nb-f-page', 'aria-label': t('page') });
    page.appendChild(h('option', { value: '', text: t('allPages') }));
    var pages = new Map();
    all.forEach(function (c) {
      var p = str(c.page);
      if (p && !pages.has(p)) pages.set(p, str(anch(c).chapter) || p);
    });
    Array.from(pages.keys()).sort().forEach(function (p) {
      page.appendChild(h('option', { value: p, text: pages.get(p) }));
    });
    var count = h('span', { class: 'nb-shown', 'aria-live': 'polite' });
    root.appendChild(h('div', { class: 'nb-view-filters' },
      h('label', { class: 'nb-field' }, h('span', { text: t('search') }), search),
      h('label', { class: 'nb-field' }, h('span', { text: t('status') }), status),
      h('label', { class: 'nb-field' }, h('span', { text: t('hold') }), hold),
      h('label', { class: 'nb-field' }, h('span', { text: t('page') }), page),
      count));
    var list = h('ol', { class: 'nb-rows' });
    var empty = h('p', { class: 'nb-empty', text: t('noMatch'), hidden: true });
    root.appendChild(list);
    root.appendChild(empty);
    var rows = all.map(function (c) {
      return { c: c, el: commentRow(c), hay: haystack(c) };
    });
    var apply = function () {
      var q = search.value.trim().toLowerCase();
      var st = status.value, hd = hold.value, pg = page.value;
      var shown = 0;
      list.textContent = '';
      rows.forEach(function (r) {
        var s = statusOf(r.c);
        var ok = (!q || r.hay.indexOf(q) >= 0) &&
          (st === 'all' || (st === 'active' ? s !== 'resolved' : s === st)) &&
          (hd === 'all' || (hd === 'held') === (r.c.hold === true)) &&
          (!pg || str(r.c.page) === pg);
        if (ok) {
          list.appendChild(r.el);
          shown++;
        }
      });
      count.textContent = t('shown', { shown: shown, total: all.length });
      empty.hidden = shown > 0;
    };
    [search, status, hold, page].forEach(function (el) {
      el.addEventListener('input', apply);
      el.addEventListener('change', apply);
    });
    app.appendChild(root);
    apply();
  }

  function haystack(c) {
    var a = obj(c.anchor);
    var parts = [str(c.page), str(anch(c).chapter), str(a.quote), str(a.label)];
    arr(c.thread).forEach(function (m) { parts.push(str(obj(m).body)); });
    return parts.join('\n').toLowerCase();
  }

  function commentRow(c) {
    var status = statusOf(c);
    var fm = firstMessage(c);
    var n = arr(c.thread).length;
    var url = siteHref(c.url || anch(c).url);
    var pageText = str(anch(c).chapter) || str(c.page);
    var li = h('li', { class: 'nb-row' + (c.hold === true ? ' nb-held' : ''), 'data-nb-id': str(c.id), 'data-nb-status': status });
    li.appendChild(h('div', { class: 'nb-row-head' },
      h('span', { class: 'nb-dot', 'data-nb-status': status, title: statusLabel(status) }),
      url ? h('a', { class: 'nb-row-page', href: url, text: pageText }) : h('span', { class: 'nb-row-page', text: pageText }),
      headEl(c, 60, 50),
      c.hold === true ? h('span', { class: 'nb-hold', text: '⏸ ' + t('onHold') }) : null,
      n > 1 ? h('span', { class: 'nb-replies', text: repliesText(n - 1) }) : null,
      h('span', { class: 'nb-status-text', text: statusLabel(status) })));
    li.appendChild(h('p', { class: 'nb-row-first' },
      h('span', { class: 'nb-author', title: str(fm.author) || null, text: displayName(fm.author) }), ': ',
      h('span', { class: 'nb-body', text: str(fm.body) })));
    var res = obj(c.resolution);
    if (res.note) {
      li.appendChild(h('p', { class: 'nb-resolution' },
        h('span', { class: 'nb-resolution-label', text: status === 'addressed' ? t('proposed') : t('resolution') }),
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
    var entries = arr(data.entries).filter(function (e) { return e && typeof e === 'object'; });
    var root = h('div', { class: 'nb-journal' });
    if (!entries.length) root.appendChild(h('p', { class: 'nb-empty', text: t('emptyJournal') }));
    entries.forEach(function (e) {
      var art = h('article', { class: 'nb-j-entry', 'data-nb-entry': str(e.id), id: e.id ? 'nb-j-' + str(e.id) : null });
      art.appendChild(h('div', { class: 'nb-j-head' },
        e.date ? h('time', { class: 'nb-j-date', datetime: str(e.date), text: fmtDay(e.date) }) : null,
        h('span', { class: 'nb-j-title', role: 'heading', 'aria-level': '3', text: str(e.title) || str(e.id) })));
      if (e.summary) art.appendChild(h('p', { class: 'nb-j-summary', text: str(e.summary) }));
      var changes = arr(e.changes);
      if (changes.length) {
        var ul = h('ul', { class: 'nb-j-changes' });
        changes.forEach(function (ch) {
          ch = obj(ch);
          var url = siteHref(ch.url);
          var li = h('li', { class: 'nb-j-change' },
            url ? h('a', { href: url, text: str(ch.page) }) : h('span', { text: str(ch.page) }),
            ch.what ? ' — ' + str(ch.what) : '');
          if (ch.why) li.appendChild(h('div', { class: 'nb-why', text: str(ch.why) }));
          var ids = arr(ch.commentIds).map(str).filter(Boolean);
          if (ids.length) {
            var p = h('div', { class: 'nb-j-ids' }, t('commentIds'));
            ids.forEach(function (id, i) {
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

  /* ============================================================ write side (serve) */

  var API = '/__notabene/api/';
  var SCROLL_KEY = 'notabene:scroll';
  var W = {
    on: false, // the write API answered
    generation: 0, // the build the page came from (as far as the client knows)
    page: '', // the chapter's page id and space (pages with exactly one chapter)
    space: '',
    selRange: null, // the selection the "Comment" button offers to comment on
    selBackward: false,
    selBtn: null,
    compose: null, // the open composer: {pop, rect, opener}
    identityBtn: null,
    toast: null,
    toastTimer: 0,
    restoring: false, // a live reload is putting the scroll position back
    reloadWanted: false,
    reloadTimer: 0
  };

  function ls(key) {
    try { return localStorage.getItem(key) || ''; } catch (e) { return ''; }
  }
  function lsSet(key, v) {
    try {
      if (v) localStorage.setItem(key, v);
      else localStorage.removeItem(key);
    } catch (e) { /* storage off */ }
  }

  /** `Name <email>` (or `Name`) from the identity stored in this browser; '' when unset. */
  function authorString() {
    var name = ls('notabene:author').trim();
    var email = ls('notabene:email').trim();
    if (!name) return '';
    return email ? name + ' <' + email + '>' : name;
  }

  /** One call to the serve API (same origin only). Resolves with the JSON body; rejects with an Error. */
  function api(method, path, body) {
    var headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    var token = ls('notabene:token');
    if (token) headers['x-notabene-token'] = token;
    return fetch(API + path, {
      method: method,
      headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'same-origin',
      redirect: 'error'
    }).then(function (r) {
      return r.text().then(function (text) {
        var data = null;
        try { data = JSON.parse(text); } catch (e) { data = null; }
        if (!r.ok) {
          var err = new Error(data && typeof data.error === 'string' ? data.error : 'HTTP ' + r.status);
          err.status = r.status;
          throw err;
        }
        return data;
      });
    }, function () {
      var err = new Error(t('offline'));
      err.status = 0;
      throw err;
    });
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
    Array.prototype.forEach.call(buttons, function (b) { b.disabled = !!on; });
  }
  function toast(text, action) {
    var el = W.toast;
    if (!el || !el.isConnected) {
      el = h('div', { class: 'nb-toast nb-ui', 'data-nb-ui': '', role: 'status', 'aria-live': 'polite' });
      D.body.appendChild(el);
      W.toast = el;
    }
    el.textContent = '';
    el.appendChild(h('span', { class: 'nb-toast-text', text: text }));
    if (action) {
      var b = h('button', { type: 'button', class: 'nb-btn nb-toast-action', text: action.label });
      b.addEventListener('click', action.fn);
      el.appendChild(b);
    }
    el.hidden = false;
    clearTimeout(W.toastTimer);
    if (!action) W.toastTimer = setTimeout(function () { el.hidden = true; }, 6000);
  }
  function wroteSomething() {
    toast(t('saved'));
  }

  /* ----- live reload */

  function here() {
    return location.pathname + location.search;
  }
  function saveScroll() {
    try {
      sessionStorage.setItem(SCROLL_KEY, JSON.stringify({ href: here(), x: window.scrollX, y: window.scrollY }));
    } catch (e) { /* storage off */ }
  }
  /** After a live reload: back to where the reader was. */
  function restoreScroll() {
    var saved = null;
    try {
      saved = JSON.parse(sessionStorage.getItem(SCROLL_KEY) || 'null');
      sessionStorage.removeItem(SCROLL_KEY);
    } catch (e) {
      return;
    }
    if (!saved || saved.href !== here()) return;
    W.restoring = true;
    var go = function () { window.scrollTo(num(saved.x, 0), num(saved.y, 0)); };
    go();
    var again = function () {
      go();
      (window.requestAnimationFrame || setTimeout)(go);
    };
    if (D.readyState === 'complete') again();
    else window.addEventListener('load', again);
  }

  function dirtyDrafts() {
    return Array.prototype.some.call(D.querySelectorAll('[data-nb-draft]'), function (el) {
      return str(el.value).trim() !== '';
    }) || !!D.querySelector('dialog.nb-dialog[open]');
  }
  function reloadNow() {
    saveScroll();
    location.reload();
  }
  /** Reloads for a new build, unless the reader is writing something: then waits, with a note. */
  function maybeReload() {
    if (!W.reloadWanted) return;
    clearTimeout(W.reloadTimer);
    if (dirtyDrafts()) {
      if (!W.toast || W.toast.hidden || !W.toast.querySelector('.nb-toast-action')) {
        toast(t('rebuilt'), { label: t('reloadNow'), fn: reloadNow });
      }
      W.reloadTimer = setTimeout(maybeReload, 1000);
      return;
    }
    reloadNow();
  }

  /** Long-polls the build generation; a new build reloads the page. */
  function watch() {
    var failures = 0;
    var loop = function () {
      api('GET', 'status?since=' + W.generation).then(function (d) {
        failures = 0;
        var g = num(obj(d).generation, W.generation);
        if (g !== W.generation) {
          // Higher: rebuilt. Lower: the server was restarted (its site may differ too).
          W.generation = g;
          W.reloadWanted = true;
          maybeReload();
        }
        setTimeout(loop, 20);
      }, function () {
        failures++;
        setTimeout(loop, Math.min(30000, 500 * Math.pow(2, Math.min(failures, 6))));
      });
    };
    loop();
  }

  /** Asks the server whether this page is served by `mdbook-notabene serve`. */
  function probe() {
    if (!/^https?:$/.test(location.protocol) || typeof window.fetch !== 'function') return;
    api('GET', 'status').then(function (d) {
      d = obj(d);
      if (d.api !== 1 || typeof d.generation !== 'number') return;
      W.generation = d.generation;
      if (d.writable === true) safely('write mode', enableWrite);
      watch();
    }, function () { /* a static site: stay read-only */ });
  }

  function enableWrite() {
    W.on = true;
    HTML.classList.add('nb-write');
    D.querySelectorAll('.nb-thread[data-nb-id]').forEach(function (wrap) {
      var opts = threadOpts.get(wrap) || {};
      if (opts.noActions || wrap.querySelector(':scope > .nb-actions')) return;
      var c = S.comments.get(wrap.getAttribute('data-nb-id'));
      if (c) wrap.appendChild(threadActions(c));
    });
    // New comments need one chapter per page (print.html carries them all: read-only there).
    if (S.islands.length === 1 && mainEl()) {
      var data = S.islands[0].data;
      W.page = str(data.page);
      W.space = str(data.space);
      if (W.page && W.space) {
        safely('selection', setupSelection);
        safely('block tools', function () { setupBlockTools(arr(data.blocks)); });
        safely('page composer', function () { setupPageComposer(S.islands[0].el); });
      }
    }
    safely('identity', setupIdentityControl);
  }

  /* ----- identity */

  /** Runs `fn(author)` with the stored identity, asking for it first if there is none. */
  function withAuthor(fn, opener) {
    var a = authorString();
    if (a) {
      fn(a);
      return;
    }
    openIdentity(function () {
      var b = authorString();
      if (b) fn(b);
    }, opener);
  }

  function openIdentity(onDone, opener) {
    var old = D.querySelector('dialog.nb-identity');
    if (old) old.remove();
    var nameIn = h('input', { type: 'text', class: 'nb-input nb-identity-name', name: 'name', autocomplete: 'name', required: true });
    var emailIn = h('input', { type: 'email', class: 'nb-input nb-identity-email', name: 'email', autocomplete: 'email' });
    nameIn.value = ls('notabene:author');
    emailIn.value = ls('notabene:email');
    var err = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    var save = h('button', { type: 'button', class: 'nb-btn nb-primary nb-identity-save', text: t('save') });
    var cancel = h('button', { type: 'button', class: 'nb-btn nb-identity-cancel', text: t('cancel') });
    var dlg = h('dialog', { class: 'nb-dialog nb-identity nb-ui', 'data-nb-ui': '', 'aria-labelledby': 'nb-identity-title' },
      h('h2', { id: 'nb-identity-title', class: 'nb-dialog-title', text: t('identityTitle') }),
      h('p', { class: 'nb-note', text: t('identityNote') }),
      h('label', { class: 'nb-field' }, h('span', { text: t('name') }), nameIn),
      h('label', { class: 'nb-field' }, h('span', { text: t('email') }), emailIn),
      err,
      h('div', { class: 'nb-form-actions' }, cancel, save));
    var closed = false;
    var finish = function (ok) {
      if (closed) return;
      closed = true;
      if (dlg.open && dlg.close) dlg.close();
      dlg.remove();
      if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
      if (ok && onDone) onDone();
      maybeReload();
    };
    save.addEventListener('click', function () {
      var name = nameIn.value.trim();
      var email = emailIn.value.trim();
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
    cancel.addEventListener('click', function () { finish(false); });
    dlg.addEventListener('cancel', function (e) { e.preventDefault(); finish(false); });
    dlg.addEventListener('keydown', function (e) {
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

  function setupIdentityControl() {
    if (!S.panel) return;
    var foot = S.panel.querySelector('.nb-panel-foot');
    if (!foot) return;
    var b = h('button', { type: 'button', class: 'nb-identity-btn' });
    b.addEventListener('click', function () { openIdentity(null, b); });
    foot.insertBefore(b, foot.firstChild);
    W.identityBtn = b;
    updateIdentityControl();
  }
  function updateIdentityControl() {
    var b = W.identityBtn;
    if (!b) return;
    var a = authorString();
    b.textContent = a ? t('you', { name: displayName(a) }) : t('setName');
    b.title = t('changeIdentity');
  }

  /* ----- the text model (what anchors are captured from) */

  function mainEl() {
    return D.querySelector('main');
  }
  function inUI(node) {
    var el = node && (node.nodeType === 1 ? node : node.parentElement);
    return !!(el && el.closest('[data-nb-ui]'));
  }
  /** Elements whose text is not reader text (skipped with their whole subtree). */
  function skipped(el) {
    var tag = el.localName;
    if (tag === 'script' || tag === 'style') return true;
    if (el.hasAttribute('data-nb-ui')) return true;
    var cl = el.classList;
    if (cl.contains('mermaid') && (tag === 'pre' || el.hasAttribute('data-nb-src') || el.hasAttribute('data-processed'))) return true;
    // mdBook's own code-block buttons and playground output.
    if (tag === 'div' && cl.contains('buttons') && el.parentElement && el.parentElement.localName === 'pre') return true;
    if (tag === 'code' && cl.contains('result')) return true;
    return false;
  }
  /** The flat text of `root`: every reader Text node's value, in document order. */
  function textModel(root) {
    var nodes = [];
    var starts = [];
    var parts = [];
    var index = new Map();
    var pos = 0;
    var walker = D.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: function (n) {
        if (n.nodeType === 3) return NodeFilter.FILTER_ACCEPT;
        return skipped(n) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
      }
    });
    for (var n = walker.nextNode(); n; n = walker.nextNode()) {
      index.set(n, nodes.length);
      nodes.push(n);
      starts.push(pos);
      parts.push(n.nodeValue);
      pos += n.nodeValue.length;
    }
    return { nodes: nodes, starts: starts, index: index, text: parts.join('') };
  }
  /** The flat offset of a boundary point: the length of the reader text before it. */
  function flatOffset(m, container, offset) {
    if (container.nodeType === 3 && m.index.has(container)) {
      var i = m.index.get(container);
      return m.starts[i] + Math.max(0, Math.min(offset, container.nodeValue.length));
    }
    // An element boundary (or a point in skipped text): count the reader text nodes before it.
    var probe = D.createRange();
    probe.setStart(container, offset);
    probe.collapse(true);
    var lo = 0;
    var hi = m.nodes.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (probe.comparePoint(m.nodes[mid], 0) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return 0;
    return m.starts[lo - 1] + m.nodes[lo - 1].nodeValue.length;
  }
  function isLowSurrogate(u) {
    return u >= 0xdc00 && u <= 0xdfff;
  }
  /** The section of a point: the trimmed text of the last h1–h4 of `main` that starts before it. */
  function sectionAt(main, container, offset) {
    var probe = D.createRange();
    probe.setStart(container, offset);
    probe.collapse(true);
    var last = null;
    var hs = main.querySelectorAll('h1, h2, h3, h4');
    for (var i = 0; i < hs.length; i++) {
      if (inUI(hs[i])) continue;
      if (probe.comparePoint(hs[i], 0) <= 0) last = hs[i];
      else break;
    }
    return last ? last.textContent.trim() : null;
  }

  /**
   * The text-quote anchor of a Range, captured from the text model the build anchors against:
   * {quote, prefix, suffix, section}; null for a range outside `main`, or without reader text
   * (a range inside the client's own UI has none: its text is not in the model). A boundary in
   * skipped content counts as the edge of that content, so a range that runs into the client UI
   * (a triple click on the last paragraph ends at the page discussion) keeps its reader text.
   * Prefix and suffix are 40 UTF-16 units (39 rather than split a surrogate pair).
   */
  function captureAnchor(range) {
    var main = mainEl();
    if (!main || !range || typeof range.startContainer === 'undefined') return null;
    if (!main.contains(range.startContainer) || !main.contains(range.endContainer)) return null;
    var m = textModel(main);
    var text = m.text;
    var s = flatOffset(m, range.startContainer, range.startOffset);
    var e = flatOffset(m, range.endContainer, range.endOffset);
    if (e < s) { var x = s; s = e; e = x; }
    if (s > 0 && isLowSurrogate(text.charCodeAt(s))) s--;
    if (e < text.length && isLowSurrogate(text.charCodeAt(e))) e++;
    var quote = text.slice(s, e);
    if (!quote.trim()) return null;
    var ps = Math.max(0, s - 40);
    if (ps > 0 && isLowSurrogate(text.charCodeAt(ps))) ps++;
    var se = Math.min(text.length, e + 40);
    if (se < text.length && isLowSurrogate(text.charCodeAt(se))) se--;
    return {
      quote: quote,
      prefix: text.slice(ps, s),
      suffix: text.slice(e, se),
      section: sectionAt(main, range.startContainer, range.startOffset)
    };
  }
  window.__notabene.captureAnchor = captureAnchor;
  window.__notabene.flatText = function () {
    var main = mainEl();
    return main ? textModel(main).text : '';
  };

  /* ----- selection → "Comment" */

  function setupSelection() {
    var btn = h('button', {
      type: 'button',
      class: 'nb-sel-btn nb-ui',
      'data-nb-ui': '',
      hidden: true,
      'aria-label': t('commentOnSel'),
      'aria-keyshortcuts': 'Control+Alt+M Meta+Alt+M',
      title: t('commentOnSel') + ' (Ctrl+Alt+M)'
    }, h('span', { 'aria-hidden': 'true', text: '💬' }), ' ' + t('commentVerb'));
    D.body.appendChild(btn);
    W.selBtn = btn;
    // Keep the selection alive while the button is pressed.
    btn.addEventListener('pointerdown', function (e) { e.preventDefault(); });
    btn.addEventListener('mousedown', function (e) { e.preventDefault(); });
    btn.addEventListener('click', function (e) {
      e.preventDefault();
      e.stopPropagation();
      var r = W.selRange;
      hideSelBtn();
      if (r) composeSelection(r);
    });
    var timer = 0;
    var later = function (ms) {
      clearTimeout(timer);
      timer = setTimeout(function () { safely('selection', checkSelection); }, ms);
    };
    D.addEventListener('pointerup', function () { later(0); });
    D.addEventListener('pointercancel', function () { later(120); });
    D.addEventListener('keyup', function (e) {
      if (e.shiftKey || e.key === 'Shift' || e.key === 'Home' || e.key === 'End') later(0);
    });
    D.addEventListener('selectionchange', function () { later(120); });
    // From the keyboard: Ctrl+Alt+M (⌘+⌥+M) comments on the selection.
    D.addEventListener('keydown', function (e) {
      if (!(e.ctrlKey || e.metaKey) || !e.altKey || e.shiftKey || e.code !== 'KeyM') return;
      safely('selection', checkSelection);
      if (!btn.hidden && W.selRange) {
        e.preventDefault();
        btn.click();
      }
    });
    window.addEventListener('scroll', placeSelBtn, { passive: true });
    window.addEventListener('resize', placeSelBtn);
  }

  function selectable(r) {
    var main = mainEl();
    if (!main || !main.contains(r.commonAncestorContainer)) return false;
    if (inUI(r.commonAncestorContainer)) return false;
    if (!String(r).trim()) return false;
    return !!captureAnchor(r);
  }

  function checkSelection() {
    var sel = window.getSelection();
    var r = sel && sel.rangeCount ? sel.getRangeAt(0) : null;
    if (!r || r.collapsed || W.compose || !selectable(r)) {
      hideSelBtn();
      return;
    }
    W.selRange = r.cloneRange();
    W.selBackward = false;
    try {
      var p = D.createRange();
      p.setStart(sel.anchorNode, sel.anchorOffset);
      W.selBackward = p.comparePoint(sel.focusNode, sel.focusOffset) < 0;
    } catch (e) { /* detached nodes */ }
    var btn = W.selBtn;
    btn.hidden = false;
    btn.classList.toggle('nb-docked', !!(window.matchMedia && window.matchMedia('(pointer: coarse)').matches));
    placeSelBtn();
  }
  function hideSelBtn() {
    if (W.selBtn) W.selBtn.hidden = true;
    W.selRange = null;
  }
  function placeSelBtn() {
    var btn = W.selBtn;
    var r = W.selRange;
    if (!btn || btn.hidden || !r) return;
    if (btn.classList.contains('nb-docked')) {
      btn.style.left = '';
      btn.style.top = '';
      return;
    }
    var rects = Array.prototype.filter.call(r.getClientRects(), function (x) { return x.width > 0 || x.height > 0; });
    var box = rects.length ? (W.selBackward ? rects[0] : rects[rects.length - 1]) : r.getBoundingClientRect();
    var w = btn.offsetWidth;
    var bh = btn.offsetHeight;
    var vw = HTML.clientWidth;
    var vh = window.innerHeight;
    var left = Math.max(8, Math.min((W.selBackward ? box.left : box.right) - w / 2, vw - w - 8));
    var top = W.selBackward ? box.top - bh - 8 : box.bottom + 8;
    if (top + bh > vh - 8) top = box.top - bh - 8;
    if (top < 8) top = Math.min(vh - bh - 8, box.bottom + 8);
    btn.style.left = Math.round(left + window.scrollX) + 'px';
    btn.style.top = Math.round(top + window.scrollY) + 'px';
  }

  function composeSelection(range) {
    var anchor = captureAnchor(range);
    if (!anchor) return;
    if (S.hasHighlights) safely('pending', function () { CSS.highlights.set('nb-pending', new Highlight(range)); });
    var sel = window.getSelection();
    if (sel) sel.removeAllRanges();
    openComposer({
      icon: '',
      preview: '“' + truncate(anchor.quote, 120) + '”',
      rect: function () { return range.getBoundingClientRect(); },
      payload: function (body, author) {
        return { page: W.page, space: W.space, scope: 'selection', anchor: anchor, author: author, body: body };
      }
    });
  }

  /* ----- the composer popover */

  function openComposer(o) {
    closeComposer(false);
    closeThread(false);
    var ta = h('textarea', {
      class: 'nb-input nb-compose-body',
      rows: '4',
      placeholder: t('bodyPlaceholder'),
      'aria-label': t('bodyPlaceholder'),
      'data-nb-draft': ''
    });
    var err = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    var save = h('button', { type: 'button', class: 'nb-btn nb-primary nb-compose-save', text: t('save') });
    var cancel = h('button', { type: 'button', class: 'nb-btn nb-compose-cancel', text: t('cancel') });
    var close = h('button', { type: 'button', class: 'nb-close', 'aria-label': t('close'), title: t('close'), text: '×' });
    var pop = h('div', {
      class: 'nb-pop nb-compose nb-ui',
      'data-nb-ui': '',
      role: 'dialog',
      'aria-label': t('newComment'),
      tabindex: '-1'
    },
    h('div', { class: 'nb-pop-head' }, h('span', { class: 'nb-pop-title', text: t('newComment') }), close),
    h('div', { class: 'nb-pop-body' },
      h('blockquote', { class: 'nb-thread-quote nb-compose-quote' + (o.icon ? ' nb-thread-block' : ''), text: o.preview }),
      ta,
      h('p', { class: 'nb-hint', text: t('saveHint') }),
      err,
      h('div', { class: 'nb-form-actions' }, cancel, save)));
    D.body.appendChild(pop);
    W.compose = { pop: pop, rect: o.rect, opener: o.opener || null };
    placeFloating(pop, o.rect, null);
    ta.focus({ preventScroll: true });
    var submit = function () {
      var body = ta.value.trim();
      if (!body) {
        showError(err, t('emptyBody'));
        ta.focus();
        return;
      }
      withAuthor(function (author) {
        busy([save, cancel], true);
        showError(err, null);
        api('POST', 'comments', o.payload(body, author)).then(function () {
          ta.value = '';
          closeComposer(false);
          wroteSomething();
        }, function (e) {
          busy([save, cancel], false);
          showError(err, e);
          ta.focus();
        });
      }, ta);
    };
    save.addEventListener('click', submit);
    cancel.addEventListener('click', function () { closeComposer(true); });
    close.addEventListener('click', function () { closeComposer(true); });
    ta.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        submit();
      }
    });
    pop.addEventListener('keydown', function (e) {
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        closeComposer(true);
      }
    });
  }
  function closeComposer(restoreFocus) {
    var c = W.compose;
    if (!c) return;
    W.compose = null;
    c.pop.remove();
    if (S.hasHighlights) safely('pending', function () { CSS.highlights.delete('nb-pending'); });
    if (restoreFocus && c.opener && c.opener.isConnected) c.opener.focus();
    maybeReload();
  }

  /* ----- blocks: images and diagrams */

  function djb2(s) {
    var x = 5381;
    for (var i = 0; i < s.length; i++) x = (Math.imul(x, 33) + s.charCodeAt(i)) | 0;
    return (x >>> 0).toString(36);
  }
  /** The chapter's commentable blocks in document order: each Markdown image once, each diagram. */
  function domBlocks(main) {
    var out = [];
    main.querySelectorAll('pre.mermaid, img').forEach(function (el) {
      if (inUI(el)) return;
      if (el.localName === 'img') {
        if (el.closest('pre.mermaid, script')) return;
        // mdBook renders an image twice (the second copy is its zoom view): count it once.
        var label = el.closest('label.checkbox-label');
        if (label && label.querySelector('img') !== el) return;
        out.push({ el: el, kind: 'image', key: 'image:' + str(el.getAttribute('src')), host: el.closest('span.nb-block') || label || el });
      } else {
        var src = el.getAttribute('data-nb-src') || el.textContent || '';
        var p = el.parentElement;
        out.push({
          el: el,
          kind: 'mermaid',
          key: el.getAttribute('data-nb-key') || 'mermaid:' + djb2(src.trim()),
          host: p && p.classList.contains('nb-block-wrap') ? p : el
        });
      }
    });
    return out;
  }
  /** Pairs DOM blocks with the island's `blocks`: by position when the shapes agree, else by key. */
  function mapBlocks(dom, entries) {
    entries = entries.map(obj);
    var same = dom.length === entries.length && dom.every(function (d, i) { return entries[i].kind === d.kind; });
    if (same) return dom.map(function (d, i) { return { dom: d, entry: entries[i] }; });
    var used = new Set();
    var pairs = [];
    dom.forEach(function (d) {
      for (var i = 0; i < entries.length; i++) {
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
    var host = d.host;
    if (host.classList.contains('nb-block') || host.classList.contains('nb-block-wrap')) return host;
    var wrap = d.kind === 'mermaid' ? h('div', { class: 'nb-block-wrap' }) : h('span', { class: 'nb-block-auto' });
    host.parentNode.insertBefore(wrap, host);
    wrap.appendChild(host);
    return wrap;
  }
  function setupBlockTools(entries) {
    var main = mainEl();
    mapBlocks(domBlocks(main), entries).forEach(function (p) {
      var host = blockHost(p.dom);
      var entry = p.entry;
      var kind = t(p.dom.kind === 'mermaid' ? 'kDiagram' : 'kImage');
      var label = t('commentOn', { kind: kind });
      var b = h('button', {
        type: 'button',
        class: 'nb-block-add',
        'data-nb-ui': '',
        'data-nb-block-index': String(num(entry.index, -1)),
        'aria-label': label + (entry.label ? ' — ' + str(entry.label) : ''),
        title: label
      });
      b.addEventListener('click', function (e) {
        e.preventDefault();
        e.stopPropagation();
        composeBlock(entry, host, b);
      });
      host.classList.add('nb-block-host');
      // One toolbar in the block's corner: the comment button, then the reader's badge.
      var tools = h('span', { class: 'nb-block-tools', 'data-nb-ui': '' }, b);
      var existing = host.querySelector(':scope > .nb-badge');
      if (existing) tools.appendChild(existing);
      host.appendChild(tools);
    });
  }
  function composeBlock(entry, host, opener) {
    var anchor = {
      kind: str(entry.kind),
      key: str(entry.key),
      label: str(entry.label),
      section: entry.section === null || entry.section === undefined ? null : str(entry.section),
      index: num(entry.index, 0)
    };
    openComposer({
      icon: anchor.kind === 'mermaid' ? '📊' : '🖼',
      preview: (anchor.kind === 'mermaid' ? '📊 ' : '🖼 ') + truncate(anchor.label || anchor.key, 70),
      rect: function () { return host.getBoundingClientRect(); },
      opener: opener,
      payload: function (body, author) {
        return { page: W.page, space: W.space, scope: 'block', anchor: anchor, author: author, body: body };
      }
    });
  }

  /* ----- page discussion composer */

  function setupPageComposer(isl) {
    var section = discussionSection(isl);
    var ta = h('textarea', {
      class: 'nb-input nb-page-body',
      rows: '3',
      placeholder: t('discussionPlaceholder'),
      'aria-label': t('discussionPlaceholder'),
      'data-nb-draft': ''
    });
    var send = h('button', { type: 'button', class: 'nb-btn nb-primary nb-page-send', text: t('commentVerb') });
    var err = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    section.appendChild(h('div', { class: 'nb-composer' },
      ta,
      err,
      h('div', { class: 'nb-form-actions' }, h('span', { class: 'nb-hint', text: t('saveHint') }), send)));
    var submit = function () {
      var body = ta.value.trim();
      if (!body) {
        showError(err, t('emptyBody'));
        ta.focus();
        return;
      }
      withAuthor(function (author) {
        busy([send], true);
        showError(err, null);
        api('POST', 'comments', { page: W.page, space: W.space, scope: 'page', anchor: null, author: author, body: body })
          .then(function () {
            ta.value = '';
            busy([send], false);
            wroteSomething();
          }, function (e) {
            busy([send], false);
            showError(err, e);
          });
      }, ta);
    };
    send.addEventListener('click', submit);
    ta.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        submit();
      }
    });
  }

  /* ----- thread actions */

  function threadActions(c) {
    var id = str(c.id);
    var page = str(c.page);
    var status = statusOf(c);
    var box = h('div', { class: 'nb-actions' });
    var bar = h('div', { class: 'nb-actions-bar' });
    var forms = h('div', { class: 'nb-actions-forms' });
    var msg = h('p', { class: 'nb-error', role: 'alert', hidden: true });
    box.appendChild(bar);
    box.appendChild(forms);
    box.appendChild(msg);
    var button = function (cls, label, fn) {
      var b = h('button', { type: 'button', class: 'nb-act ' + cls, text: label });
      b.addEventListener('click', function (e) {
        e.preventDefault();
        e.stopPropagation();
        fn(b);
      });
      bar.appendChild(b);
      return b;
    };
    var patch = function (fields, opener) {
      withAuthor(function (author) {
        fields.page = page;
        fields.id = id;
        fields.author = author;
        if (fields.reply) fields.reply.author = author;
        var buttons = box.querySelectorAll('button');
        busy(buttons, true);
        showError(msg, null);
        api('PATCH', 'comments', fields).then(function (updated) {
          forms.textContent = '';
          replaceThread(obj(updated).id ? updated : c);
          wroteSomething();
        }, function (e) {
          busy(buttons, false);
          showError(msg, e);
        });
      }, opener);
    };
    var form = function (kind, initial, placeholder, submitLabel, onSubmit) {
      forms.textContent = '';
      showError(msg, null);
      var ta = h('textarea', { class: 'nb-input nb-' + kind + '-body', rows: '3', placeholder: placeholder, 'aria-label': placeholder, 'data-nb-draft': '' });
      ta.value = initial;
      var ok = h('button', { type: 'button', class: 'nb-btn nb-primary nb-' + kind + '-send', text: submitLabel });
      var no = h('button', { type: 'button', class: 'nb-btn nb-' + kind + '-cancel', text: t('cancel') });
      var submit = function () {
        var body = ta.value.trim();
        if (!body) {
          showError(msg, t('emptyBody'));
          ta.focus();
          return;
        }
        onSubmit(body, ok);
      };
      ok.addEventListener('click', submit);
      no.addEventListener('click', function () {
        ta.value = '';
        forms.textContent = '';
        showError(msg, null);
        maybeReload();
      });
      ta.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          submit();
        } else if (e.key === 'Escape') {
          e.preventDefault();
          e.stopPropagation();
          no.click();
        }
      });
      forms.appendChild(h('div', { class: 'nb-form nb-form-' + kind }, ta, h('div', { class: 'nb-form-actions' }, no, ok)));
      ta.focus();
    };
    button('nb-act-reply', t('reply'), function () {
      form('reply', '', t('replyPlaceholder'), t('send'), function (body, b) { patch({ reply: { body: body } }, b); });
    });
    if (status === 'open' && arr(c.thread).length === 1) {
      button('nb-act-edit', t('edit'), function () {
        form('edit', str(firstMessage(c).body), t('bodyPlaceholder'), t('save'), function (body, b) { patch({ edit: { body: body } }, b); });
      });
    }
    if (status === 'open') button('nb-act-resolve', t('resolve'), function (b) { patch({ status: 'resolved' }, b); });
    else if (status === 'resolved') button('nb-act-reopen', t('reopen'), function (b) { patch({ status: 'open' }, b); });
    button('nb-act-hold', c.hold === true ? t('holdOff') : t('holdOn'), function (b) { patch({ hold: c.hold !== true }, b); });
    button('nb-act-delete', t('del'), function () {
      forms.textContent = '';
      showError(msg, null);
      var yes = h('button', { type: 'button', class: 'nb-btn nb-danger nb-delete-confirm', text: t('del') });
      var no = h('button', { type: 'button', class: 'nb-btn nb-delete-cancel', text: t('cancel') });
      no.addEventListener('click', function () { forms.textContent = ''; });
      yes.addEventListener('click', function () {
        var buttons = box.querySelectorAll('button');
        busy(buttons, true);
        api('DELETE', 'comments', { page: page, id: id }).then(function () {
          D.querySelectorAll('.nb-thread[data-nb-id="' + cssEscape(id) + '"]').forEach(function (wrap) {
            wrap.classList.add('nb-deleted');
            var acts = wrap.querySelector(':scope > .nb-actions');
            if (acts) acts.remove();
            wrap.appendChild(h('p', { class: 'nb-note nb-deleted-note', role: 'status', text: t('deleted') }));
          });
          wroteSomething();
        }, function (e) {
          busy(buttons, false);
          showError(msg, e);
        });
      });
      forms.appendChild(h('div', { class: 'nb-form nb-form-delete', role: 'group' },
        h('p', { class: 'nb-confirm-text', text: t('deleteConfirm') }),
        h('div', { class: 'nb-form-actions' }, no, yes)));
      no.focus();
    });
    return box;
  }

  /** Shows a comment as the server now has it, wherever its thread is on screen. */
  function replaceThread(c) {
    var id = str(c.id);
    var old = S.comments.get(id);
    if (old) {
      if (old.anchoring && !c.anchoring) c.anchoring = old.anchoring;
      var i = S.order.indexOf(old);
      if (i >= 0) S.order[i] = c;
      S.comments.set(id, c);
    }
    D.querySelectorAll('.nb-thread[data-nb-id="' + cssEscape(id) + '"]').forEach(function (wrap) {
      var fresh = renderThread(c, threadOpts.get(wrap) || {});
      var focused = wrap.contains(D.activeElement);
      wrap.parentNode.replaceChild(fresh, wrap);
      if (focused) {
        var f = fresh.querySelector('.nb-actions button');
        if (f) f.focus();
      }
    });
  }

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

  if (D.readyState === 'loading') D.addEventListener('DOMContentLoaded', start);
  else start();
})();
