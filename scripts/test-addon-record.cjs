// Preloaded (NODE_OPTIONS --require) into every Node process of a test file in the normal pass of
// scripts/run-tests.mjs: notes in MATTE_TEST_ADDON_RECORD each matte addon the process opens
// (matte.node, matte_probes.node, from any path), before it is opened, so a crash cannot lose it.
// The ASan pass skips the files whose processes opened none.
'use strict';
const { appendFileSync } = require('node:fs');
const { basename } = require('node:path');

const record = process.env.MATTE_TEST_ADDON_RECORD;
const dlopen = process.dlopen;
if (record) {
  process.dlopen = function recordedDlopen(module, filename, ...rest) {
    if (/^matte.*\.node$/.test(basename(String(filename)))) appendFileSync(record, `${process.pid} ${filename}\n`);
    return dlopen.call(this, module, filename, ...rest);
  };
}
