import { runTestFilesOf } from './helpers/oneProcess.js';

// The files of test/constructs/ run in this one process (see runTestFilesOf); package.json's tap config
// leaves them out of the suite's own list.
runTestFilesOf(new URL('./constructs/', import.meta.url));
