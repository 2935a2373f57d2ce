// ESLint (flat config) for the widget's front end, its build script and its unit tests.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["src/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.browser },
    rules: {
      // small functions: a view's DOM code apart from the logic that decides what it shows
      "max-lines-per-function": ["error", { max: 100, skipBlankLines: true, skipComments: true }],
      "no-unused-vars": ["error", { args: "after-used", argsIgnorePattern: "^_" }],
      eqeqeq: ["error", "always"],
      "no-var": "error",
      "prefer-const": "error",
      // names reach the page as text only (textContent, attributes), never parsed as HTML
      "no-restricted-properties": [
        "error",
        { property: "innerHTML", message: "set textContent: names are text, never HTML" },
        { property: "outerHTML", message: "set textContent: names are text, never HTML" },
        { property: "insertAdjacentHTML", message: "build nodes with h(): names are text" },
      ],
    },
  },
  {
    files: ["build.mjs", "eslint.config.js", "test/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.node },
  },
];
