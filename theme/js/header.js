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
 * Assembled by mdbook-notabene from the files of its `theme/js/` (in the order
 * of its `theme/manifest.txt`) into one function scope. Each file is one namespace
 * that owns its state and uses only those before it: Locale, Dom, Words, TextModel, Paint,
 * Print, Toolbar, Live, Thread, Panel, Views, Compose, Actions; Start, last, wires up the few
 * calls that go the other way and starts the client.
 *
 * Rules the client keeps:
 *  - no network request except same-origin `/__notabene/api/*` calls, and those only
 *    when the page is served over http(s) (a `file://` book makes none at all);
 *  - every piece of comment text goes through textContent / createTextNode;
 *  - JSON is read with JSON.parse(el.textContent) — of a deflated data script, of the text
 *    the browser's DecompressionStream inflates from it;
 *  - every element it inserts carries `data-nb-ui` (or sits inside one that does), so
 *    the text model used to anchor comments skips it;
 *  - on a page without data it does nothing at all.
 */
