import { defineConfig } from 'drizzle-kit';

// Every domain keeps its tables in its own schema.ts; drizzle-kit reads them all and writes one
// ordered set of SQL migrations that both drivers (node-postgres and PGlite) apply at start.
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/platform/**/schema.ts', './src/domains/**/schema.ts'],
  out: './drizzle',
});
