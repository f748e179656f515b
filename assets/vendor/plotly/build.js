// Builds the partial plotly.js bundles listed in manifest.json with esbuild, the way plotly.js's
// own esbuild-config.js builds dist/ (IIFE, global "Plotly", regl -> @plotly/regl, es2016),
// each from plotly.js's lib/core plus exactly its trace modules (plotly.js's CUSTOM_BUNDLE.md:
// lib/core + Plotly.register). Run by scripts/vendor_plotly.sh: node build.js <node_modules dir> [--write]
// Without --write it checks that every built file has the manifest's sha256 (exit 1 if not).
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const here = __dirname;
const modules = path.resolve(process.argv[2]);
const write = process.argv.includes('--write');
const manifest = JSON.parse(fs.readFileSync(path.join(here, 'manifest.json'), 'utf8'));
const esbuild = require(path.join(modules, 'esbuild'));
const version = require(path.join(modules, 'plotly.js', 'package.json')).version;
if (version !== manifest['plotly.js']) {
  console.error(`plotly.js ${version} installed, manifest says ${manifest['plotly.js']}`);
  process.exit(1);
}
let bad = 0;
for (const [name, b] of Object.entries(manifest.bundles)) {
  const traces = b.traces.filter((t) => t !== 'scatter');  // scatter is in lib/core
  const entry = "'use strict';\nvar Plotly = require('plotly.js/lib/core');\n" +
    `Plotly.register([${traces.map((t) => `require('plotly.js/lib/${t}')`).join(', ')}]);\n` +
    'module.exports = Plotly;\n';
  const out = esbuild.buildSync({
    stdin: {contents: entry, resolveDir: path.dirname(modules), sourcefile: `plotly-${name}.js`},
    bundle: true, minify: true, format: 'iife', globalName: 'Plotly', target: 'es2016', write: false,
    alias: {regl: '@plotly/regl', stream: 'stream-browserify'},
    define: {global: 'window', 'define.amd': 'false'},
    loader: {'.css': 'empty'},  // maplibre's CSS: for map subplots only, which no bundle here has
    legalComments: 'none', logLevel: 'warning',
    banner: {js: `/**\n* plotly.js v${version} (partial bundle "${name}": ${b.traces.join(', ')})\n` +
      '* Copyright 2012-2026, Plotly, Inc.\n* All rights reserved.\n* Licensed under the MIT license\n*/'},
  }).outputFiles[0].contents;
  const sha = crypto.createHash('sha256').update(out).digest('hex');
  const file = path.join(here, b.file);
  if (write) {
    fs.writeFileSync(file, out);
    b.sha256 = sha;
    b.bytes = out.length;
    console.log(`wrote ${b.file}: ${out.length} bytes, sha256 ${sha}`);
  } else if (sha !== b.sha256) {
    console.error(`${b.file}: built ${sha}, manifest ${b.sha256}`);
    bad += 1;
  } else {
    console.log(`${b.file}: ${out.length} bytes, sha256 ${sha} (as in the manifest)`);
  }
}
if (write) fs.writeFileSync(path.join(here, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
process.exit(bad ? 1 : 0);
