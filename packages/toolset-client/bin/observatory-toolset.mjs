#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, as the repository's other commands do.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
