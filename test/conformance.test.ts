import { runTestFilesOf } from './helpers/oneProcess.js';

// The files of test/conformance/ run in this one process (see runTestFilesOf); package.json's tap config
// leaves them out of the suite's own list. The property suite (properties/conformance.test.ts) runs in a
// process of its own beside this one: it is the folder's longest file, and grows with each operation (60 s on
// the worked examples' tree, the rest of the folder 45 s), so one process for both was the longest of npm test
// -- spec-driven there.
runTestFilesOf(new URL('./conformance/', import.meta.url));
