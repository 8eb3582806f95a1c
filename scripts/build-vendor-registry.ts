/**
 * Builds `vendors.json` (the shipped vendor registry) from the snapshot of published crawler
 * ranges in shared/data/vendor-ranges (YAML policy data of TecharoHQ/anubis, commit 2f45638a,
 * 2026-08-20, MIT). One-off and repeatable:
 *
 *   npx tsx scripts/build-vendor-registry.ts [snapshot-dir] [out-file]
 *
 * The table below says which vendors the service knows, their UA patterns, categories and
 * documentation; the YAML supplies the prefixes and the source URL comments. Every pattern is
 * checked against its examples (and the snapshot's own regex where the vendor has one), every
 * prefix must parse, and no example may be claimed by two vendors. The output is then validated
 * by the same loader the service uses.
 */
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { parseVendorRegistry, type VendorEntry } from '../src/domains/honeypot/vendors/registry.ts';

export const SNAPSHOT = {
  source: 'TecharoHQ/anubis policy data (data/crawlers/*.yaml, data/clients/*.yaml), via shared/data/vendor-ranges',
  repository: 'https://github.com/TecharoHQ/anubis',
  commit: '2f45638a',
  date: '2026-08-20',
  licence: 'MIT',
  copyright: 'Copyright (c) 2025 Xe Iaso',
  licenseFile: 'vendor-ranges-LICENSE',
  note: 'Published ranges go stale; the vendor-ranges-refresh job overlays fresher lists where a vendor serves them as JSON.',
} as const;

interface SnapshotRef {
  /** File in the snapshot folder, e.g. `crawlers-openai-gptbot.yaml`. */
  file: string;
  /** `name` of the entry (or entries) in that file whose prefixes the vendor uses. */
  names: string[];
  /** Check the examples against the entry's own `user_agent_regex` too. */
  checkSnapshotRegex: boolean;
}

interface VendorSpec extends Omit<VendorEntry, 'cidrs' | 'creationTime' | 'sourceUrls'> {
  ranges: SnapshotRef | null;
  /** Source URLs beyond those the snapshot's comments give. */
  extraSourceUrls?: string[];
}

const OPENAI_DOCS = 'https://platform.openai.com/docs/bots/overview-of-openai-crawlers';
const ANTHROPIC_DOCS = 'https://support.claude.com/en/articles/8896518-does-anthropic-crawl-data-from-the-web-and-how-can-site-owners-block-the-crawler';
const PERPLEXITY_DOCS = 'https://docs.perplexity.ai/guides/bots';
const META_DOCS = 'https://developers.facebook.com/docs/sharing/webmasters/web-crawlers/';
const GOOGLE_COMMON = 'https://developers.google.com/static/crawling/ipranges/common-crawlers.json';
const GOOGLE_FETCHERS = 'https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers-google.json';
const NO_RANGES_NOTE = 'publishes no IP ranges in the snapshot and no Web Bot Auth keys are shipped: requests naming it are UNVERIFIED_AGENT, never LIAR';

export const VENDORS: VendorSpec[] = [
  {
    id: 'openai-gptbot',
    name: 'OpenAI GPTBot',
    operator: 'OpenAI',
    category: 'ai-crawler',
    isAi: true,
    uaPattern: 'GPTBot',
    ranges: { file: 'crawlers-openai-gptbot.yaml', names: ['openai-gptbot'], checkSnapshotRegex: true },
    rangesUrls: ['https://openai.com/gptbot.json'],
    docsUrl: OPENAI_DOCS,
    robotsTokens: ['GPTBot'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)'],
    notes: 'Collects AI training data.',
  },
  {
    id: 'openai-searchbot',
    name: 'OpenAI OAI-SearchBot',
    operator: 'OpenAI',
    category: 'ai-search',
    isAi: true,
    uaPattern: 'OAI-SearchBot',
    ranges: { file: 'crawlers-openai-searchbot.yaml', names: ['openai-searchbot'], checkSnapshotRegex: true },
    rangesUrls: ['https://openai.com/searchbot.json'],
    docsUrl: OPENAI_DOCS,
    robotsTokens: ['OAI-SearchBot'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot'],
    notes: 'Indexes for ChatGPT search; does not collect training data.',
  },
  {
    id: 'openai-chatgpt-user',
    name: 'OpenAI ChatGPT-User',
    operator: 'OpenAI',
    category: 'ai-assistant',
    isAi: true,
    uaPattern: 'ChatGPT-User',
    ranges: { file: 'clients-openai-chatgpt-user.yaml', names: ['openai-chatgpt-user'], checkSnapshotRegex: true },
    rangesUrls: ['https://openai.com/chatgpt-user.json'],
    docsUrl: OPENAI_DOCS,
    robotsTokens: ['ChatGPT-User'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot'],
    notes: 'Fetches pages on behalf of a ChatGPT user.',
  },
  {
    id: 'anthropic-claudebot',
    name: 'Anthropic ClaudeBot',
    operator: 'Anthropic',
    category: 'ai-crawler',
    isAi: true,
    uaPattern: 'ClaudeBot',
    ranges: null,
    docsUrl: ANTHROPIC_DOCS,
    robotsTokens: ['ClaudeBot'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)'],
    notes: `Collects AI training data. Anthropic ${NO_RANGES_NOTE}.`,
  },
  {
    id: 'anthropic-claude-user',
    name: 'Anthropic Claude-User',
    operator: 'Anthropic',
    category: 'ai-assistant',
    isAi: true,
    uaPattern: 'Claude-User',
    ranges: null,
    docsUrl: ANTHROPIC_DOCS,
    robotsTokens: ['Claude-User'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)'],
    notes: `Fetches pages on behalf of a Claude user. Anthropic ${NO_RANGES_NOTE}.`,
  },
  {
    id: 'anthropic-claude-searchbot',
    name: 'Anthropic Claude-SearchBot',
    operator: 'Anthropic',
    category: 'ai-search',
    isAi: true,
    uaPattern: 'Claude-SearchBot',
    ranges: null,
    docsUrl: ANTHROPIC_DOCS,
    robotsTokens: ['Claude-SearchBot'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-SearchBot/1.0; +Claude-SearchBot@anthropic.com)'],
    notes: `Indexes for search results in Claude. Anthropic ${NO_RANGES_NOTE}.`,
  },
  {
    id: 'perplexity-perplexitybot',
    name: 'Perplexity PerplexityBot',
    operator: 'Perplexity AI',
    category: 'ai-search',
    isAi: true,
    uaPattern: 'PerplexityBot',
    ranges: { file: 'crawlers-perplexitybot.yaml', names: ['perplexitybot'], checkSnapshotRegex: true },
    rangesUrls: ['https://www.perplexity.com/perplexitybot.json'],
    docsUrl: PERPLEXITY_DOCS,
    robotsTokens: ['PerplexityBot'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)'],
    notes: 'Indexes for Perplexity search; does not collect training data.',
  },
  {
    id: 'perplexity-user',
    name: 'Perplexity Perplexity-User',
    operator: 'Perplexity AI',
    category: 'ai-assistant',
    isAi: true,
    uaPattern: 'Perplexity-User',
    ranges: { file: 'clients-perplexity-user.yaml', names: ['perplexity-user'], checkSnapshotRegex: true },
    rangesUrls: ['https://www.perplexity.com/perplexity-user.json'],
    docsUrl: PERPLEXITY_DOCS,
    robotsTokens: ['Perplexity-User'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)'],
    notes: 'Fetches pages on behalf of a Perplexity user.',
  },
  {
    id: 'google-googlebot',
    name: 'Google common crawlers (Googlebot, Storebot-Google, Google-InspectionTool, GoogleOther)',
    operator: 'Google',
    category: 'search-crawler',
    isAi: false,
    // `Googlebot[/-]` and not bare `Googlebot`: the old AdSense UA "Mediapartners-Google
    // (Googlebot)" comes from Google's special-crawler ranges, not these.
    uaPattern: 'Googlebot[/-]|Storebot-Google|Google-InspectionTool|GoogleOther',
    ranges: { file: 'crawlers-googlebot.yaml', names: ['googlebot'], checkSnapshotRegex: true },
    extraSourceUrls: [GOOGLE_COMMON],
    rangesUrls: [GOOGLE_COMMON],
    reverseDns: ['googlebot.com', 'google.com'],
    docsUrl: 'https://developers.google.com/crawling/docs/crawlers-fetchers/google-common-crawlers',
    robotsTokens: ['Googlebot', 'Googlebot-Image', 'Googlebot-News', 'Googlebot-Video', 'Storebot-Google', 'GoogleOther', 'Google-Extended'],
    uaExamples: [
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Googlebot-Image/1.0 (+http://www.google.com/bot.html)',
    ],
    notes:
      'Google-Extended is a robots.txt product token only (it controls use of content for Gemini training and grounding); it never appears in a User-Agent header, so it has no entry and no pattern. The crawling itself is done by Googlebot.',
  },
  {
    id: 'google-cloudvertexbot',
    name: 'Google-CloudVertexBot',
    operator: 'Google',
    category: 'ai-crawler',
    isAi: true,
    uaPattern: 'Google-CloudVertexBot',
    ranges: { file: 'crawlers-googlebot.yaml', names: ['googlebot'], checkSnapshotRegex: false },
    extraSourceUrls: [GOOGLE_COMMON],
    rangesUrls: [GOOGLE_COMMON],
    reverseDns: ['googlebot.com', 'google.com'],
    docsUrl: 'https://developers.google.com/crawling/docs/crawlers-fetchers/google-common-crawlers',
    robotsTokens: ['Google-CloudVertexBot'],
    uaExamples: ['Mozilla/5.0 (compatible; Google-CloudVertexBot; +https://cloud.google.com/enterprise-search)'],
    notes: 'Crawls sites for Vertex AI Agents at the site owner\'s request; one of Google\'s common crawlers, so it uses their ranges.',
  },
  {
    id: 'google-user-triggered-fetchers',
    name: 'Google user-triggered fetchers',
    operator: 'Google',
    category: 'fetcher',
    isAi: false,
    uaPattern: 'Feed[Ff]etcher-Google|GoogleProducer|Google-Read-Aloud|Google-Site-Verification|Google-CWS|Google-Pinpoint|GoogleMessages',
    ranges: { file: 'clients-google-user-triggered-fetchers.yaml', names: ['google-user-triggered-fetchers'], checkSnapshotRegex: false },
    rangesUrls: [GOOGLE_FETCHERS],
    reverseDns: ['google.com'],
    docsUrl: 'https://developers.google.com/crawling/docs/crawlers-fetchers/google-user-triggered-fetchers',
    uaExamples: ['FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)', 'Mozilla/5.0 (compatible; Google-Site-Verification/1.0)'],
    notes:
      'Ranges are Google\'s user-triggered-fetchers-google.json (fetchers Google controls). Google also publishes user-triggered-fetchers.json (fetches by apps users run on Google Cloud) and user-triggered-agents.json; those are not in the snapshot and are not proof of Google.',
  },
  {
    id: 'google-notebooklm',
    name: 'Google NotebookLM / Gemini Notebook fetcher',
    operator: 'Google',
    category: 'ai-assistant',
    isAi: true,
    uaPattern: 'Google-NotebookLM|Google-GeminiNotebook',
    ranges: { file: 'clients-google-user-triggered-fetchers.yaml', names: ['google-user-triggered-fetchers'], checkSnapshotRegex: false },
    rangesUrls: [GOOGLE_FETCHERS],
    reverseDns: ['google.com'],
    docsUrl: 'https://developers.google.com/crawling/docs/crawlers-fetchers/google-user-triggered-fetchers',
    uaExamples: ['Google-NotebookLM'],
    notes: 'A user-triggered fetcher: fetches the URLs a user gives NotebookLM as sources.',
  },
  {
    id: 'microsoft-bingbot',
    name: 'Microsoft Bingbot',
    operator: 'Microsoft',
    category: 'search-crawler',
    isAi: false,
    uaPattern: 'bingbot',
    ranges: { file: 'crawlers-bingbot.yaml', names: ['bingbot'], checkSnapshotRegex: true },
    rangesUrls: ['https://www.bing.com/toolbox/bingbot.json'],
    reverseDns: ['search.msn.com'],
    docsUrl: 'https://www.bing.com/webmasters/help/which-crawlers-does-bing-use-8c184ec0',
    robotsTokens: ['bingbot'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36'],
    notes: 'Bing search (and the grounding of Microsoft Copilot) crawler.',
  },
  {
    id: 'apple-applebot',
    name: 'Applebot',
    operator: 'Apple',
    category: 'search-crawler',
    isAi: false,
    uaPattern: 'Applebot',
    ranges: { file: 'crawlers-applebot.yaml', names: ['applebot'], checkSnapshotRegex: true },
    rangesUrls: ['https://search.developer.apple.com/applebot.json'],
    reverseDns: ['applebot.apple.com'],
    docsUrl: 'https://support.apple.com/en-us/119829',
    robotsTokens: ['Applebot', 'Applebot-Extended'],
    uaExamples: ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)'],
    notes: 'Indexing for Siri and Spotlight. Applebot-Extended is a robots.txt token only (use of content for Apple Intelligence training); it is never sent as a UA.',
  },
  {
    id: 'meta-externalagent',
    name: 'Meta meta-externalagent',
    operator: 'Meta',
    category: 'ai-crawler',
    isAi: true,
    uaPattern: 'meta-externalagent',
    ranges: null,
    docsUrl: META_DOCS,
    robotsTokens: ['meta-externalagent'],
    uaExamples: ['meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)'],
    notes: `Crawls for AI training and indexing. Meta ${NO_RANGES_NOTE}.`,
  },
  {
    id: 'meta-externalfetcher',
    name: 'Meta meta-externalfetcher',
    operator: 'Meta',
    category: 'ai-assistant',
    isAi: true,
    uaPattern: 'meta-externalfetcher',
    ranges: null,
    docsUrl: META_DOCS,
    uaExamples: ['meta-externalfetcher/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)'],
    notes: `Fetches links on behalf of a user of Meta AI products. Meta ${NO_RANGES_NOTE}.`,
  },
  {
    id: 'meta-facebookexternalhit',
    name: 'Meta facebookexternalhit',
    operator: 'Meta',
    category: 'link-preview',
    isAi: false,
    uaPattern: 'facebookexternalhit',
    ranges: null,
    docsUrl: META_DOCS,
    robotsTokens: ['facebookexternalhit'],
    uaExamples: ['facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)'],
    notes: `Builds link previews for shared URLs. Meta ${NO_RANGES_NOTE}.`,
  },
  {
    id: 'amazon-amazonbot',
    name: 'Amazon Amazonbot',
    operator: 'Amazon',
    category: 'ai-crawler',
    isAi: true,
    uaPattern: 'Amazonbot',
    ranges: null,
    reverseDns: ['crawl.amazonbot.amazon'],
    docsUrl: 'https://developer.amazon.com/amazonbot',
    robotsTokens: ['Amazonbot'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36'],
    notes: 'Crawls for Alexa answers and Amazon AI models. Amazon publishes no IP ranges in the snapshot; it documents forward-confirmed reverse DNS under crawl.amazonbot.amazon, which is its proof here.',
  },
  {
    id: 'bytedance-bytespider',
    name: 'ByteDance Bytespider',
    operator: 'ByteDance',
    category: 'ai-crawler',
    isAi: true,
    uaPattern: 'Bytespider',
    ranges: null,
    robotsTokens: ['Bytespider'],
    uaExamples: ['Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)'],
    notes: `Crawls for ByteDance's language models. ByteDance ${NO_RANGES_NOTE}.`,
  },
  {
    id: 'commoncrawl-ccbot',
    name: 'Common Crawl CCBot',
    operator: 'Common Crawl Foundation',
    category: 'dataset-crawler',
    isAi: true,
    uaPattern: 'CCBot',
    ranges: { file: 'crawlers-commoncrawl.yaml', names: ['common-crawl'], checkSnapshotRegex: true },
    rangesUrls: ['https://index.commoncrawl.org/ccbot.json'],
    docsUrl: 'https://commoncrawl.org/ccbot',
    robotsTokens: ['CCBot'],
    uaExamples: ['CCBot/2.0 (https://commoncrawl.org/faq/)'],
    notes: 'Builds the open Common Crawl corpus, the largest source of LLM pre-training text; counted as AI for that reason.',
  },
  {
    id: 'xai-code-review-sourcing',
    name: 'xAI research crawler (code-review-sourcing)',
    operator: 'xAI',
    category: 'ai-crawler',
    isAi: true,
    uaPattern: 'code-review-sourcing.*\\+xai-research',
    ranges: { file: 'crawlers-xai.yaml', names: ['xai-crawler-and-asn'], checkSnapshotRegex: true },
    uaExamples: ['Mozilla/5.0 (compatible; code-review-sourcing/1.0; +xai-research)'],
    notes: 'The snapshot gives no source URL: its prefix is the network (ASN) the crawler was seen from, not a list xAI publishes.',
  },
  {
    id: 'mistral-mistralai-user',
    name: 'Mistral MistralAI-User',
    operator: 'Mistral AI',
    category: 'ai-assistant',
    isAi: true,
    uaPattern: 'MistralAI-User',
    ranges: { file: 'clients-mistral-mistralai-user.yaml', names: ['mistral-mistralai-user'], checkSnapshotRegex: true },
    docsUrl: 'https://docs.mistral.ai/robots/',
    robotsTokens: ['MistralAI-User'],
    uaExamples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; MistralAI-User/1.0; +https://docs.mistral.ai/robots)'],
    notes: 'Fetches pages on behalf of a Le Chat user. Its JSON list is not refreshed: its format is not known to be the {creationTime, prefixes} one.',
  },
  {
    id: 'duckduckgo-duckduckbot',
    name: 'DuckDuckGo DuckDuckBot',
    operator: 'DuckDuckGo',
    category: 'search-crawler',
    isAi: false,
    uaPattern: 'DuckDuckBot',
    ranges: { file: 'crawlers-duckduckbot.yaml', names: ['duckduckbot'], checkSnapshotRegex: true },
    docsUrl: 'https://duckduckgo.com/duckduckgo-help-pages/results/duckduckbot',
    robotsTokens: ['DuckDuckBot'],
    uaExamples: ['DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)'],
    notes: 'The list is published as a web page, so the refresh job does not fetch it.',
  },
  {
    id: 'duckduckgo-duckassistbot',
    name: 'DuckDuckGo DuckAssistBot',
    operator: 'DuckDuckGo',
    category: 'ai-assistant',
    isAi: true,
    uaPattern: 'DuckAssistBot',
    ranges: null,
    docsUrl: 'https://duckduckgo.com/duckduckgo-help-pages/results/duckassistbot',
    robotsTokens: ['DuckAssistBot'],
    uaExamples: ['DuckAssistBot/1.2; (+http://duckduckgo.com/duckassistbot.html)'],
    notes: `Fetches pages for DuckAssist answers. Its ranges are not in the snapshot: it ${NO_RANGES_NOTE}.`,
  },
  {
    id: 'kagi-kagibot',
    name: 'Kagibot',
    operator: 'Kagi',
    category: 'search-crawler',
    isAi: false,
    uaPattern: 'Kagibot',
    ranges: { file: 'crawlers-kagibot.yaml', names: ['kagibot'], checkSnapshotRegex: true },
    docsUrl: 'https://kagi.com/bot',
    uaExamples: ['Mozilla/5.0 (compatible; Kagibot/1.0; +https://kagi.com/bot)'],
  },
  {
    id: 'marginalia-search',
    name: 'Marginalia Search crawler',
    operator: 'Marginalia Search',
    category: 'search-crawler',
    isAi: false,
    uaPattern: 'search\\.marginalia\\.nu',
    ranges: { file: 'crawlers-marginalia.yaml', names: ['marginalia'], checkSnapshotRegex: true },
    uaExamples: ['search.marginalia.nu'],
    notes: 'The snapshot says the prefixes were received directly over email; there is no published URL.',
  },
  {
    id: 'mojeek-mojeekbot',
    name: 'MojeekBot',
    operator: 'Mojeek',
    category: 'search-crawler',
    isAi: false,
    uaPattern: 'MojeekBot',
    ranges: { file: 'crawlers-mojeekbot.yaml', names: ['mojeekbot'], checkSnapshotRegex: true },
    docsUrl: 'https://www.mojeek.com/bot.html',
    uaExamples: ['Mozilla/5.0 (compatible; MojeekBot/0.11; +https://www.mojeek.com/bot.html)'],
  },
  {
    id: 'qwant-qwantbot',
    name: 'Qwantbot',
    operator: 'Qwant',
    category: 'search-crawler',
    isAi: false,
    uaPattern: 'Qwantbot',
    ranges: { file: 'crawlers-qwantbot.yaml', names: ['qwantbot'], checkSnapshotRegex: true },
    docsUrl: 'https://help.qwant.com/bot/',
    uaExamples: ['Mozilla/5.0 (compatible; Qwantbot/1.0; +https://help.qwant.com/bot/)'],
  },
  {
    id: 'wikimedia-citoid',
    name: 'Wikimedia Citoid',
    operator: 'Wikimedia Foundation',
    category: 'fetcher',
    isAi: false,
    uaPattern: 'Citoid/WMF',
    ranges: { file: 'crawlers-wikimedia-citoid.yaml', names: ['wikimedia-citoid'], checkSnapshotRegex: true },
    docsUrl: 'https://www.mediawiki.org/wiki/Citoid',
    uaExamples: ['Citoid/WMF (mailto:noc@wikimedia.org)'],
    notes: 'Fetches cited pages to build citations for Wikipedia editors.',
  },
  {
    id: 'wikimedia-zotero',
    name: 'Wikimedia Zotero translation server',
    operator: 'Wikimedia Foundation',
    category: 'fetcher',
    isAi: false,
    uaPattern: 'ZoteroTranslationServer/WMF',
    ranges: { file: 'crawlers-wikimedia-citoid.yaml', names: ['wikimedia-zotero-translation-server'], checkSnapshotRegex: true },
    docsUrl: 'https://www.mediawiki.org/wiki/Citoid',
    uaExamples: ['ZoteroTranslationServer/WMF (mailto:noc@wikimedia.org)'],
  },
  {
    id: 'internet-archive',
    name: 'Internet Archive crawler (archive.org_bot)',
    operator: 'Internet Archive',
    category: 'archiver',
    isAi: false,
    uaPattern: 'archive\\.org_bot',
    ranges: { file: 'crawlers-internet-archive.yaml', names: ['internet-archive'], checkSnapshotRegex: false },
    docsUrl: 'https://archive.org/details/archive.org_bot',
    uaExamples: ['Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)'],
    notes: 'The prefixes are those of the Internet Archive\'s network (AS7941), not a published crawler list.',
  },
  {
    id: 'arquivo-pt',
    name: 'Arquivo.pt web crawler',
    operator: 'Arquivo.pt (FCT)',
    category: 'archiver',
    isAi: false,
    uaPattern: 'Arquivo-web-crawler',
    ranges: null,
    docsUrl: 'https://arquivo.pt/faq-crawling',
    uaExamples: ['Arquivo-web-crawler (compatible; heritrix/3.4.0 +https://arquivo.pt/faq-crawling)'],
    notes:
      'The snapshot lists 194.210.235.0/26 for Arquivo.pt but deliberately not with its UA: the on-demand "Archive Page Now" service sends the same UA from elsewhere. Using the prefix as proof would call those fetches liars, so the vendor has no proof here and stays UNVERIFIED_AGENT.',
  },
];

/** Cloud networks the snapshot lists without a user agent (DENY lists); not crawler identities. */
export const NOT_VENDORS = ['crawlers-alibaba-cloud.yaml', 'crawlers-huawei-cloud.yaml', 'crawlers-tencent-cloud.yaml'];

interface YamlEntry {
  name: string;
  user_agent_regex?: string;
  remote_addresses?: string[];
}

interface SnapshotFile {
  entries: YamlEntry[];
  /** Source URLs from the comments inside each entry, by entry name. */
  urls: Map<string, string[]>;
}

/**
 * The range-list URLs in each entry's own (indented) comments; the file-level comments above an
 * entry point at documentation pages, which the vendor table carries as `docsUrl`. Comment lines
 * that are commands (`# curl ...`) are not URLs and are skipped.
 */
function commentUrls(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of text.split('\n')) {
    const name = /^- name:\s*(\S+)/.exec(line);
    if (name) {
      current = [];
      out.set(name[1]!, current);
      continue;
    }
    const comment = /^\s+#\s*(https?:\/\/\S+)\s*$/.exec(line);
    if (comment && current !== null) current.push(comment[1]!);
  }
  return out;
}

function readSnapshot(dir: string, file: string): SnapshotFile {
  const text = readFileSync(join(dir, file), 'utf8');
  const entries = parse(text) as YamlEntry[];
  if (!Array.isArray(entries)) throw new Error(`${file}: expected a list of entries`);
  return { entries, urls: commentUrls(text) };
}

function fail(message: string): never {
  throw new Error(`build-vendor-registry: ${message}`);
}

function buildEntry(spec: VendorSpec, dir: string): VendorEntry {
  const { ranges, extraSourceUrls, ...rest } = spec;
  const ua = new RegExp(spec.uaPattern);
  for (const example of spec.uaExamples ?? []) if (!ua.test(example)) fail(`${spec.id}: example does not match: ${example}`);
  if (ranges === null) return { ...rest, cidrs: [], sourceUrls: extraSourceUrls ?? [], creationTime: null };
  const snapshot = readSnapshot(dir, ranges.file);
  const cidrs: string[] = [];
  const sourceUrls: string[] = [];
  for (const name of ranges.names) {
    const entry = snapshot.entries.find((e) => e.name === name) ?? fail(`${ranges.file} has no entry "${name}"`);
    if (ranges.checkSnapshotRegex && entry.user_agent_regex) {
      const theirs = new RegExp(entry.user_agent_regex);
      for (const example of spec.uaExamples ?? []) {
        if (!theirs.test(example)) fail(`${spec.id}: example does not match the snapshot's regex ${entry.user_agent_regex}: ${example}`);
      }
    }
    cidrs.push(...(entry.remote_addresses ?? []));
    sourceUrls.push(...(snapshot.urls.get(name) ?? []).filter((u) => !/ipinfo\.io/.test(u) || spec.id === 'internet-archive'));
  }
  if (cidrs.length === 0) fail(`${spec.id}: the snapshot lists no prefixes`);
  const unique = [...new Set(cidrs)];
  const urls = [...new Set([...sourceUrls, ...(extraSourceUrls ?? [])])];
  return { ...rest, cidrs: unique, sourceUrls: urls, creationTime: SNAPSHOT.date };
}

function checkNoOverlap(entries: VendorEntry[]): void {
  for (const entry of entries) {
    for (const example of entry.uaExamples ?? []) {
      const claimants = entries.filter((e) => new RegExp(e.uaPattern).test(example)).map((e) => e.id);
      if (claimants.length !== 1) fail(`example of ${entry.id} is claimed by ${claimants.join(', ')}: ${example}`);
    }
  }
}

export function buildRegistry(dir: string): { snapshot: typeof SNAPSHOT; vendors: VendorEntry[] } {
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  const used = new Set(VENDORS.flatMap((v) => (v.ranges ? [v.ranges.file] : [])));
  const unused = files.filter((f) => !used.has(f) && !NOT_VENDORS.includes(f) && f !== 'crawlers-arquivo-pt.yaml');
  if (unused.length > 0) fail(`snapshot files not used by any vendor: ${unused.join(', ')}`);
  const vendors = VENDORS.map((spec) => buildEntry(spec, dir));
  checkNoOverlap(vendors);
  const registry = { snapshot: SNAPSHOT, vendors };
  parseVendorRegistry(registry, 'build output');
  return registry;
}

function main(): void {
  const here = fileURLToPath(new URL('.', import.meta.url));
  // The service reads the registry and ships its data's licence from the vendors folder (registry.ts SHIPPED_VENDORS_FILE).
  const vendorsDir = join(here, '../src/domains/honeypot/vendors');
  const dir = resolve(process.argv[2] ?? join(here, '../../shared/data/vendor-ranges'));
  const out = resolve(process.argv[3] ?? join(vendorsDir, 'vendors.json'));
  const registry = buildRegistry(dir);
  writeFileSync(out, `${JSON.stringify(registry, null, 2)}\n`);
  copyFileSync(join(dir, 'LICENSE'), join(vendorsDir, SNAPSHOT.licenseFile));
  const prefixes = registry.vendors.reduce((n, v) => n + v.cidrs.length, 0);
  console.log(`wrote ${out}: ${registry.vendors.length} vendors, ${prefixes} prefixes`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
