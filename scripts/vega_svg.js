#!/usr/bin/env node
// Renders a Vega-Lite spec (JSON, data inline) to SVG without a browser,
// with the pinned vega and vega-lite builds the reports inline
// (scripts/fetch_vega.sh puts them in data/vega; $LEAKY_VEGA_DIR
// elsewhere). Vega's headless renderer measures text by estimate, so the
// SVG depends only on the spec and those two scripts: docs/study's chart is
// written by this and checked by tests/gan/study_docs_test.sh.
//
// usage: node scripts/vega_svg.js SPEC.json OUT.svg
'use strict';
const fs = require('fs');
const path = require('path');
const Module = require('module');

if (process.argv.length !== 4) {
  console.error('usage: node scripts/vega_svg.js SPEC.json OUT.svg');
  process.exit(2);
}
const dir = process.env.LEAKY_VEGA_DIR || path.join(__dirname, '..', 'data', 'vega');
const load = (file) => {
  const where = path.join(dir, file);
  if (!fs.existsSync(where)) {
    console.error(`vega_svg: ${where} is missing: run bash scripts/fetch_vega.sh`);
    process.exit(1);
  }
  return require(where);
};
const vega = load('vega.min.js');
// vega-lite's build asks for "vega" by name: hand it the one just loaded.
const plainRequire = Module.prototype.require;
Module.prototype.require = function (id) {
  return id === 'vega' ? vega : plainRequire.apply(this, arguments);
};
const vl = load('vega-lite.min.js');

let spec;
try {
  spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
} catch (e) {
  console.error(`vega_svg: ${process.argv[2]} is not a readable JSON spec`);
  process.exit(1);
}
new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' })
  .toSVG()
  .then((svg) => fs.writeFileSync(process.argv[3], svg + '\n'))
  .catch((e) => {
    console.error(`vega_svg: the spec does not render: ${e.message}`);
    process.exit(1);
  });
