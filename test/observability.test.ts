import { runTestFilesOf } from './helpers/oneProcess.js';

// The files of test/observability/ run in this one process (see runTestFilesOf); package.json's tap config
// leaves them out of the suite's own list. Tracing (it registers a global provider and patches modules) and
// load shedding (it reads this process's event-loop delay) run in processes of their own, from test/.
runTestFilesOf(new URL('./observability/', import.meta.url));
