// ESLint for the reader client (theme/js), run by .ci/run from the repository root:
//   .ci/eslint/node_modules/.bin/eslint --config .ci/eslint/eslint.config.mjs theme/js
// (kept under .ci/ so that the published crate does not carry it).
//
// src/output/assets.rs joins theme/js into one function scope. Each file declares one namespace and
// may use only the namespaces of the files before it in that join, plus the browser globals
// it names here: `no-undef` holds each file to exactly the list below, and loading this
// config fails when the list, the join order in src/output/assets.rs and theme/js disagree.

import { readdirSync, readFileSync } from 'node:fs';
import js from '@eslint/js';
import globals from 'globals';

/** The client's files in join order: the namespace each declares, the namespaces it uses,
 * and the browser globals it uses (ECMAScript's own built-ins are always there). */
const FILES = [
  ['header.js', null, [], []],
  ['locale.js', 'Locale', [], ['document', 'navigator']],
  ['dom.js', 'Dom', ['Locale'], ['Blob', 'CSS', 'DecompressionStream', 'Response', 'atob', 'console', 'document', 'navigator', 'window']],
  ['words.js', 'Words', ['Dom'], ['document']],
  ['text.js', 'TextModel', [], ['NodeFilter', 'document']],
  ['paint.js', 'Paint', ['Locale', 'Dom', 'TextModel'],
    ['CSS', 'Highlight', 'MutationObserver', 'Node', 'NodeFilter', 'clearTimeout', 'document', 'setTimeout', 'window']],
  ['print.js', 'Print', ['Locale', 'Dom', 'Paint'], ['Node', 'document', 'location', 'window']],
  ['toolbar.js', 'Toolbar', ['Locale', 'Dom', 'Paint'], ['document']],
  ['live.js', 'Live', ['Locale', 'Dom', 'Paint'],
    ['Element', 'WebSocket', 'clearTimeout', 'document', 'fetch', 'history', 'localStorage', 'location',
      'performance', 'sessionStorage', 'setTimeout', 'window']],
  ['panel.js', 'Panel', ['Locale', 'Dom', 'Words', 'Paint', 'Print', 'Toolbar', 'Live'],
    ['Element', 'Node', 'URLSearchParams', 'document', 'localStorage', 'setTimeout', 'window']],
  ['views.js', 'Views', ['Locale', 'Dom', 'Words', 'Toolbar', 'Live', 'Panel'], ['document', 'localStorage', 'window']],
  ['compose.js', 'Compose', ['Locale', 'Dom', 'TextModel', 'Paint', 'Toolbar', 'Live', 'Panel'],
    ['CSS', 'Highlight', 'clearTimeout', 'document', 'setTimeout', 'window']],
  ['actions.js', 'Actions', ['Locale', 'Dom', 'TextModel', 'Paint', 'Live', 'Panel', 'Compose'], ['document']],
  ['start.js', 'Start', ['Locale', 'Dom', 'Words', 'TextModel', 'Paint', 'Print', 'Toolbar', 'Live', 'Panel', 'Views', 'Compose', 'Actions'],
    ['document', 'location', 'window']],
];

/** Globals mdBook's page defines (an inline script's `const`, not a window property). */
const MDBOOK = { 'locale.js': ['path_to_root'] };

function check() {
  const here = new URL('../../', import.meta.url);
  const joined = [...readFileSync(new URL('src/output/assets.rs', here), 'utf8')
    .matchAll(/include_str!\("(?:\.\.\/)+theme\/js\/([^"]+)"\)/g)].map((m) => m[1]);
  const listed = FILES.map((f) => f[0]);
  if (joined.join(' ') !== listed.join(' ')) {
    throw new Error(`eslint.config.mjs: the files (${listed.join(' ')}) are not the join of src/output/assets.rs (${joined.join(' ')})`);
  }
  const onDisk = readdirSync(new URL('theme/js/', here)).filter((f) => f.endsWith('.js')).sort();
  if (onDisk.join(' ') !== [...listed].sort().join(' ')) {
    throw new Error(`eslint.config.mjs: theme/js holds ${onDisk.join(' ')}, not the files listed here`);
  }
  const seen = new Set();
  for (const [file, ns, uses, browser] of FILES) {
    for (const u of uses) {
      if (!seen.has(u)) throw new Error(`eslint.config.mjs: ${file} uses ${u}, which is not declared before it`);
    }
    for (const b of browser) {
      if (!Object.hasOwn(globals.browser, b)) throw new Error(`eslint.config.mjs: ${b} (${file}) is not a browser global`);
    }
    if (ns) seen.add(ns);
  }
}
check();

const readonly = (names) => Object.fromEntries(names.map((n) => [n, 'readonly']));

export default [
  {
    files: ['theme/js/**/*.js'],
    languageOptions: {
      ecmaVersion: 2022,
      // One function scope, not an ES module: `src/output/assets.rs` wraps the files in a strict IIFE.
      sourceType: 'script',
      parserOptions: { ecmaFeatures: { impliedStrict: true } },
      globals: {},
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      ...js.configs.recommended.rules,
      'no-undef': 'error',
      'no-unused-vars': ['error', { vars: 'all', args: 'after-used', caughtErrors: 'all' }],
      'prefer-const': 'error',
      'no-var': 'error',
      'no-redeclare': ['error', { builtinGlobals: true }],
    },
  },
  ...FILES.map(([file, , uses, browser]) => ({
    files: [`theme/js/${file}`],
    languageOptions: {
      globals: { ...readonly(uses), ...readonly(browser), ...readonly(MDBOOK[file] || []) },
    },
  })),
];
