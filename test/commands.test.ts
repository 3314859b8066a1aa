import { runTestFilesOf } from './helpers/oneProcess.js';

// The commands run beside the service, each through its own entry point: npm run apikey and the control
// channel it reaches a live server by, npm run migrate, npm run verify, npm test's file selection, .ci/run's
// stages and npm run bench's same-work baseline. The files of test/commands/ run in this one process (see
// runTestFilesOf); package.json's tap config leaves them out of the suite's own list.
runTestFilesOf(new URL('./commands/', import.meta.url));
