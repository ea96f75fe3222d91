// Lint: typescript-eslint's recommended rules, the Next.js and React hooks rules for the UI, the
// layer boundaries of docs/architecture.md as import rules, and regular expressions that could
// take super-linear time on request data (ReDoS). Formatting is Prettier's job (`npm run format`).
import nextPlugin from '@next/eslint-plugin-next';
import reactHooks from 'eslint-plugin-react-hooks';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

const SERVER_ONLY = ['@/server/*', '@/server/**', '@/db', '@/db/**', '@/workers/**'];
const transportRefused = {
  group: ['next', 'next/*', '@/server/http/**', '@/server/web/**', '@/server/trpc/**', '@/app/**'],
  message: 'Services are transport-free: no next, server/http, server/web or server/trpc.',
};

/** Server code is refused, but for types and the pure modules of server/shared. */
const serverCodeRefused = (message) => ({
  group: [...SERVER_ONLY, '!@/server/shared', '!@/server/shared/**'],
  allowTypeImports: true,
  message,
});

/**
 * e2e/ holds the whole-system tools (browser specs, system test, fuzzer, benchmarks): they import
 * the product, never the other way round. Unit tests may spawn its CLIs by path.
 */
const toolsRefused = {
  group: ['@/e2e', '@/e2e/**', '**/e2e', '**/e2e/**'],
  message: 'e2e/ holds the whole-system tools: product code and its test support never import them.',
};

export default tseslint.config(
  { ignores: ['node_modules/**', '.next*/**', '.data/**', 'test-results/**', 'playwright-report/**', 'next-env.d.ts'] },
  {
    files: ['**/*.{ts,tsx,mjs}'],
    extends: [tseslint.configs.recommended],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['**/*.{ts,tsx,mjs}'],
    // Tests and the whole-system tools (e2e/: browser specs, fuzzer, system test, benchmarks) only
    // ever match strings they wrote themselves.
    ignores: ['**/*.test.ts', 'e2e/**'],
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': ['error', { report: 'potential' }],
    },
  },
  {
    files: ['app/**/*.{ts,tsx}', 'components/**/*.{ts,tsx}'],
    plugins: { '@next/next': nextPlugin, 'react-hooks': reactHooks },
    rules: {
      ...nextPlugin.configs.recommended.rules,
      ...nextPlugin.configs['core-web-vitals'].rules,
      ...reactHooks.configs.recommended.rules,
    },
  },
  {
    // The browser bundle: components reach the server only through tRPC (types) and the pure
    // modules in server/shared (limits, SMS segments, vocabularies).
    files: ['components/**/*.{ts,tsx}'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            serverCodeRefused('components/ runs in the browser: import types only, or a pure module from @/server/shared.'),
          ],
        },
      ],
    },
  },
  {
    files: ['server/shared/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            serverCodeRefused('server/shared is bundled for the browser: pure code only.'),
            { group: ['node:*'], message: 'server/shared is bundled for the browser: no Node.js modules.' },
          ],
        },
      ],
    },
  },
  {
    // Lists of ids or addresses go to PostgreSQL as one array parameter (db/sql-array.ts).
    files: ['server/**/*.ts', 'workers/**/*.ts', 'db/**/*.ts'],
    ignores: ['**/*.test.ts', 'server/testing/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [toolsRefused],
          paths: [
            {
              name: 'drizzle-orm',
              importNames: ['inArray', 'notInArray'],
              message: 'Use equalsAny (db/sql-array.ts): one array parameter, not one parameter per value.',
            },
          ],
        },
      ],
    },
  },
  {
    // The rest of the product and the unit tests' support (server/, workers/ and db/ above).
    files: ['app/**/*.{ts,tsx}', 'components/**/*.{ts,tsx}', 'deploy/**/*.ts', 'proxy.ts', 'server/testing/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [toolsRefused] }] },
  },
  {
    // Services are transport-free: no HTTP layer, no Next.js.
    files: ['server/services/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [transportRefused] }] },
  },
  {
    // ...and the worker process is above them: it registers their handlers (workers/registrations.ts),
    // never the other way round. Their tests may start a worker.
    files: ['server/services/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            transportRefused,
            { group: ['@/workers/**'], message: 'Services do not import the worker process: workers/ registers them.' },
          ],
        },
      ],
    },
  },
);
