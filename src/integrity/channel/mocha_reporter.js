'use strict';
// Written by efix into a directory only efix and this run know. mocha prints one reporter:
// this one runs the console reporter the command asked for (spec by default) and records
// every result in a file efix reads, so result lines printed by the code under test are not
// taken for results.
const fs = require('fs');
const path = require('path');

function builtin(name) {
  const main = require.main || module;
  const dir = path.join(path.dirname(main.filename), '..', 'lib', 'reporters');
  return main.require(path.join(dir, name));
}

function EfixReporter(runner, options) {
  const opts = options || {};
  const given = opts.reporterOption || opts.reporterOptions || {};
  const Console = builtin(given.efixConsole || 'spec');
  new Console(runner, opts);
  const results = { passes: [], failures: [], pending: [] };
  const entry = (test) => ({
    fullTitle: typeof test.fullTitle === 'function' ? test.fullTitle() : String(test.title),
    file: test.file || null,
  });
  runner.on('pass', (test) => results.passes.push(entry(test)));
  runner.on('fail', (test) => results.failures.push(entry(test)));
  runner.on('pending', (test) => results.pending.push(entry(test)));
  runner.once('end', () => {
    results.end = true;
    fs.writeFileSync(given.efixOutput, JSON.stringify(results));
  });
}

module.exports = EfixReporter;
