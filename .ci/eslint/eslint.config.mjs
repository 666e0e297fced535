// ESLint for the reader client (theme/js), run by .ci/run from the repository root:
//   .ci/eslint/node_modules/.bin/eslint --config .ci/eslint/eslint.config.mjs theme/js
// (kept under .ci/ so that the published crate does not carry it).
//
// theme/manifest.txt is the one list of the client's files, in the order build.rs joins them into
// one function scope. Each script declares one namespace and may use only the namespaces of the
// scripts before it, plus the globals it names there: `no-undef` holds each file to exactly its
// line, and loading this config fails when the manifest and theme/js disagree.

import { readdirSync, readFileSync } from 'node:fs';
import js from '@eslint/js';
import globals from 'globals';

/** Globals mdBook's page defines (an inline script's `const`, not a window property). */
const MDBOOK = ['path_to_root'];

/** The scripts of theme/manifest.txt in join order: [file, namespace or null, uses, globals]. */
function manifest() {
  const here = new URL('../../', import.meta.url);
  const words = (s) => s.split(/\s+/).filter(Boolean);
  const files = readFileSync(new URL('theme/manifest.txt', here), 'utf8').split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#') && l.startsWith('js/'))
    .map((l) => {
      const [file, ns, uses, browser, ...rest] = l.split('|').map((f) => f.trim());
      if (browser === undefined || rest.length) throw new Error(`theme/manifest.txt: not a script line: ${l}`);
      return [file.slice('js/'.length), ns === '-' ? null : ns, words(uses), words(browser)];
    });
  const listed = files.map((f) => f[0]);
  const onDisk = readdirSync(new URL('theme/js/', here)).filter((f) => f.endsWith('.js')).sort();
  if (onDisk.join(' ') !== [...listed].sort().join(' ')) {
    throw new Error(`theme/manifest.txt lists ${listed.join(' ')}, but theme/js holds ${onDisk.join(' ')}`);
  }
  const seen = new Set();
  for (const [file, ns, uses, browser] of files) {
    for (const u of uses) {
      if (!seen.has(u)) throw new Error(`theme/manifest.txt: ${file} uses ${u}, which is not declared before it`);
    }
    for (const b of browser) {
      if (!Object.hasOwn(globals.browser, b) && !MDBOOK.includes(b)) {
        throw new Error(`theme/manifest.txt: ${b} (${file}) is not a browser global`);
      }
    }
    if (ns && !new RegExp(`^const ${ns} = `, 'm').test(readFileSync(new URL(`theme/js/${file}`, here), 'utf8'))) {
      throw new Error(`theme/manifest.txt: ${file} does not declare ${ns} (\`const ${ns} = …\`)`);
    }
    if (ns) seen.add(ns);
  }
  return files;
}
const FILES = manifest();

const readonly = (names) => Object.fromEntries(names.map((n) => [n, 'readonly']));

export default [
  {
    files: ['theme/js/**/*.js'],
    languageOptions: {
      ecmaVersion: 2022,
      // One function scope, not an ES module: build.rs wraps the files in a strict IIFE.
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
      // The style the client is written in: arrow functions for callbacks, a bare expression
      // where an arrow only returns one, shorthand properties, template literals.
      'prefer-arrow-callback': 'error',
      'arrow-body-style': ['error', 'as-needed'],
      'object-shorthand': ['error', 'always'],
      'prefer-template': 'error',
      'no-redeclare': ['error', { builtinGlobals: true }],
    },
  },
  ...FILES.map(([file, , uses, browser]) => ({
    files: [`theme/js/${file}`],
    languageOptions: {
      globals: { ...readonly(uses), ...readonly(browser) },
    },
  })),
];
