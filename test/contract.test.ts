import { runTestFilesOf } from './helpers/oneProcess.js';

// The files of test/contract/ run in this one process (see runTestFilesOf); package.json's tap config
// leaves them out of the suite's own list. The gate judged on its corpora and on recorded pull requests
// (corpora/) runs in processes of its own beside it: the folder in one process was the longest file of npm
// test, 222.6 s of the 379 s of CI's npm test stage (the run of 6eb8baa), those two files 24 s of 70 alone.
runTestFilesOf(new URL('./contract/', import.meta.url));
