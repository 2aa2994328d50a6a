// The ES module entry (package.json "exports" -> "import"): firebrand is
// compiled to CommonJS, whose named exports Node detects and re-exports here.
export * from '../../dist/src/index.js';
