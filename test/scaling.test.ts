import { runTestFilesOf } from './helpers/oneProcess.js';

// Beyond one server: load shedding, PgBouncer in front of PostgreSQL, read replicas. The files of
// test/scaling/ run in this one process (see runTestFilesOf); package.json's tap config leaves them out of
// the suite's own list.
runTestFilesOf(new URL('./scaling/', import.meta.url));
