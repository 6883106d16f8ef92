// Lint configuration: typescript-eslint's recommended rules over the project's TypeScript.
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tap/**', 'coverage/**', '.exp/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'error'
    }
  },
  {
    files: ['test/**', 'bin/**', '.ci/**'],
    rules: { 'no-console': 'off' }
  }
)
