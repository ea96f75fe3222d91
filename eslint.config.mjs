// Lint for one class of bug only: regular expressions whose matching time can grow faster than
// their input (ReDoS). Every pattern that may see request data is checked; type-checking and
// style are left to tsc and review.
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

export default [
  { ignores: ['node_modules/**', '.next*/**', '.data/**', 'test-results/**', 'playwright-report/**'] },
  {
    files: ['**/*.{ts,tsx,mjs}'],
    // Tests, browser specs and benchmarks only ever match strings they wrote themselves.
    ignores: ['**/*.test.ts', 'e2e/**', 'server/bench/**'],
    languageOptions: { parser: tseslint.parser },
    plugins: { regexp },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': ['error', { report: 'potential' }],
    },
  },
];
