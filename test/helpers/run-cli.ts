// Runs the CLI from the TypeScript sources (node --import tsx), exactly as bin/svcmaps runs the built one.
import { run } from '../../src/cli/main.js';

process.exitCode = await run(process.argv);
