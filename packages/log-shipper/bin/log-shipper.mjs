#!/usr/bin/env node
// The package ships TypeScript: tsx loads it, as `npm run log-shipper` does.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
