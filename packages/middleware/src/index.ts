export { createObservatory, type FastifyPluginLike, type Observatory, type ObservatoryOptions, type ObservatoryStats } from './observatory.ts';
