/**
 * TEMPORARY: GET {v1}/trust/snapshot as the spec shapes it, until the endpoint is in the served
 * OpenAPI document. Delete this file once it is: the generated type then takes over (and a
 * duplicate declaration here would not compile).
 */
import type {} from './schema';

type Badge = 'green' | 'yellow' | 'red' | 'unknown';
type Key = 'audit' | 'drift' | 'freshness' | 'incidents' | 'integrity' | 'posture';

declare module './schema' {
  interface paths {
    '/api/observatory/v1/trust/snapshot': {
      parameters: { query?: never; header?: never; path?: never; cookie?: never };
      get: {
        parameters: { query?: never; header?: never; path?: never; cookie?: never };
        requestBody?: never;
        responses: {
          200: {
            headers: { [name: string]: unknown };
            content: {
              'application/json': {
                schema: 'svc-trust-snapshot.v1';
                generatedAt: string;
                overallBadge: Badge;
                dimensions: { key: Key; title: string; badge: Badge; summary: string; drillIn: string; apiDrillIn: string }[];
                numbers: {
                  postureGreen: number;
                  postureFailing: number;
                  federationDigest: string | null;
                  migrationParity: 'drifted' | 'matched' | 'unknown';
                  graphLagSec: number | null;
                  openIncidents: number;
                  recentAudits24h: number;
                  driftEvents24h: number;
                };
                score: { score: number; badge: Badge; breakdown: { dimension: Key; weight: number; badge: Badge; contribution: number }[] };
              };
            };
          };
        };
      };
      put?: never;
      post?: never;
      delete?: never;
      options?: never;
      head?: never;
      patch?: never;
      trace?: never;
    };
  }
}
