export { BAIT_ROOTS, createMaze, FALLBACK_TOPICS, type Page, type Topic } from './maze.ts';
export { createRouter, type Router, type RouterOptions, type RouterStats } from './router.ts';
export { loadTopics } from './topics.ts';
