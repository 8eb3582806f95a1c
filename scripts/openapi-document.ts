import { writeFileSync } from 'node:fs';
import { servedOpenApiDocument } from './served-openapi.ts';

/**
 * Writes the served OpenAPI document to the path given (the console's typed client is generated
 * from it at build time, so the console fails to build when an endpoint it uses changes).
 */
const target = process.argv[2];
if (!target) {
  process.stderr.write('usage: openapi-document.ts <output.json>\n');
  process.exit(2);
}
writeFileSync(target, await servedOpenApiDocument());
