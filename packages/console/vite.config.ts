import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

/**
 * The console is built into dist/ and served by the service itself under /console/ (no CDN, no
 * second server). `npm run dev` proxies the API to a service on :8080 for working on pages.
 */
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 700,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
  test: {
    environment: 'happy-dom',
    include: ['src/**/*.test.{ts,tsx}'],
  },
});
