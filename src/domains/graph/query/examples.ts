/**
 * The query language's worked examples, as docs/graph/query.md ("Worked examples") numbers them,
 * each with a short title. One list read three ways: the registry shows them as the body examples
 * of POST {v1}/empire/graph/query, the console's graph page offers them as buttons that fill its
 * query box, and examples.test.ts holds each to the text the docs show and to the parser.
 *
 * Plain data without imports, so the console's build can read it as it is.
 */
export interface GraphQueryExample {
  /** Its number in docs/graph/query.md. */
  n: number;
  title: string;
  query: string;
}

export const GRAPH_QUERY_EXAMPLES: readonly GraphQueryExample[] = [
  {
    n: 1,
    title: "Keys that signed an incident's events",
    query: "MATCH (i:Incident)-[:CONCERNS]->(e:EmpireEvent)-[:SIGNED_BY]->(k:Key)\nWHERE i.key = '7f0c…'\nRETURN DISTINCT k.key",
  },
  {
    n: 2,
    title: 'Fingerprints seen on two tenants',
    query: 'MATCH (f:Fingerprint)-[:SEEN_ON]->(a:Tenant), (f)-[:SEEN_ON]->(b:Tenant)\nWHERE a.key < b.key\nRETURN f.key AS fingerprint, a.key AS first, b.key AS second',
  },
  {
    n: 3,
    title: 'Tenants sharing a JA4 cluster',
    query:
      'MATCH (t1:Tenant)<-[:SEEN_ON]-(:Fingerprint)-[:IN_CLUSTER]->(c:Cluster)<-[:IN_CLUSTER]-(:Fingerprint)-[:SEEN_ON]->(t2:Tenant)\nWHERE t1.key < t2.key\nRETURN c.key AS ja4, t1.key, t2.key, count(*) AS links\nORDER BY links DESC LIMIT 20',
  },
  {
    n: 4,
    title: "An event's causes, three steps back",
    query:
      "MATCH (e:EmpireEvent {senderId: 'evt-000124'})-[:EMITTED_BY]->(:Toolset {key: 'crawler-lab'}),\n      (e)-[chain:CAUSED_BY*1..3]->(cause:EmpireEvent)\nRETURN cause.senderId, cause.eventType, chain",
  },
  {
    n: 5,
    title: 'Liars on several tenants',
    query: "MATCH (f:Fingerprint)-[:SEEN_ON]->(t:Tenant)\nWHERE f.lastUaClass IN ['LIAR', 'UNVERIFIED_AGENT']\nRETURN f.key AS fingerprint, count(t) AS tenants\nORDER BY tenants DESC LIMIT 10",
  },
  {
    n: 6,
    title: 'Fingerprints claiming an AI vendor',
    query: 'MATCH (f:Fingerprint)-[c:CLAIMS]->(v:Vendor {isAi: true})\nWHERE c.liarEvents > 0\nRETURN v.key AS vendor, count(DISTINCT f) AS liars ORDER BY liars DESC',
  },
  {
    n: 7,
    title: "Events attested by another toolset's key",
    query:
      'MATCH (a:Attestation)-[:ATTESTS]->(e:EmpireEvent)-[:EMITTED_BY]->(t:Toolset),\n      (a)-[:BY_KEY]->(k:Key)-[:BELONGS_TO]->(kt:Toolset)\nWHERE t <> kt\nRETURN e.key, t.key AS emittedBy, kt.key AS keyOf',
  },
  {
    n: 8,
    title: 'Open major incidents on a toolset',
    query:
      "MATCH (i:Incident)-[:ON_TOOLSET]->(t:Toolset {key: 'crawler-lab'})\nWHERE i.status IN ['open', 'acknowledged'] AND (i.severity = 'critical' OR i.severity = 'major')\nRETURN i.key, i.title, i.openedAt ORDER BY i.openedAt DESC LIMIT 25",
  },
  {
    n: 9,
    title: 'What a retired key touched',
    query: "MATCH (k:Key {status: 'retired'})-[*1..2]-(x)\nRETURN x.kind AS kind, count(DISTINCT x) AS nodes",
  },
  {
    n: 10,
    title: "A tenant's crawl events",
    query:
      "MATCH (e:EmpireEvent)-[:FROM_TENANT]->(t:Tenant {key: 'acme'})\nWHERE e.eventType STARTS WITH 'crawl.' AND NOT e.senderId CONTAINS 'test'\nRETURN e ORDER BY e.ts DESC LIMIT 50",
  },
];
