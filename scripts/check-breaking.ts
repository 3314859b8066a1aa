// npm run contract -- breaking: scripts/contract/breaking.ts, run with this process's arguments.
import { runBreaking } from './contract/breaking.js';

process.exitCode = runBreaking(process.argv.slice(2));
