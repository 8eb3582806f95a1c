import type { PageDef } from '../../app/pages';

/** The honeypot domain's pages (the manifest's `/honeypot…` uiPaths). */
export const honeypotPages: PageDef[] = [
  { path: '/honeypot', title: 'Dashboard', section: 'Honeypot', anyScope: ['read:dashboard'], load: () => import('./Dashboard') },
  { path: '/honeypot/fleet', title: 'Fleet', section: 'Honeypot', anyScope: ['read:dashboard'], load: () => import('./Fleet') },
  { path: '/honeypot/recent', title: 'Recent events', section: 'Honeypot', anyScope: ['read:events'], load: () => import('./Recent') },
  { path: '/honeypot/clusters', title: 'Clusters', section: 'Honeypot', anyScope: ['read:clusters'], load: () => import('./Clusters') },
  { path: '/honeypot/investigate', title: 'Investigate', section: 'Honeypot', anyScope: ['read:intel'], load: () => import('./Investigate') },
  { path: '/honeypot/tarpits', title: 'Tarpits', section: 'Honeypot', anyScope: ['read:events'], load: () => import('./Tarpits') },
  { path: '/honeypot/lures', title: 'Lures', section: 'Honeypot', anyScope: ['read:events'], load: () => import('./Lures') },
  { path: '/honeypot/sitemap', title: 'Bait sitemap', section: 'Honeypot', anyScope: ['read:events'], load: () => import('./Sitemap') },
  { path: '/honeypot/alerts', title: 'Alert rules', section: 'Honeypot', anyScope: ['read:alerts'], load: () => import('./Alerts') },
  { path: '/honeypot/tenants', title: 'Tenants', section: 'Honeypot', anyScope: ['read:tenants'], load: () => import('./Tenants') },
  { path: '/honeypot/ops', title: 'Honeypot ops', section: 'Honeypot', anyScope: ['read:dashboard'], load: () => import('./Ops') },
  { path: '/honeypot/ops/replay', title: 'Replay', section: 'Honeypot', anyScope: ['read:events'], load: () => import('./Replay') },
];
