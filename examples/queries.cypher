// dagmca Cypher cookbook — queries over the graph schema of DESIGN §6.
//
// Every node has the label :Node, its kind label (:Session, :Debate, :Round, :Turn,
// :Agent, :Tension, :Synthesis, :Final, :Section, :Integration, :Claim for the claims
// of the emergence ledger, :Persona for the agents that persist across sessions, and
// :Finding for what recurs across samples of one passage) and `id`, `session`, `created_at` (a temporal
// value), `seq` (creation order). Open stubs also carry :Stub. Relationships that can
// repeat between one pair (two observers' FLAGGED_AT, two turns' REFERENCES, a stub's
// CHECKED_AGAINST) carry a `key` that keeps them apart.
//
// Most queries take the session id as a parameter. In Neo4j Browser set it first:
//     :param session => '20261121-101500-3fa2b1'
// From the command line:
//     dagmca query "$(cat query.cypher)" --param session=20261121-101500-3fa2b1
//
// Each query starts with `// name:` and `// needs:` (the labels or relationship types a
// session must contain for the query to return rows; the tests check exactly that),
// and ends with a semicolon.

// name: sessions-by-cost
// needs: Session
// Every session in the database, the most expensive first.
MATCH (s:Session)
RETURN s.id AS session, s.title AS title, s.status AS status, s.llm_calls AS calls,
       s.tokens AS tokens, s.cost_usd AS cost_usd
ORDER BY s.cost_usd DESC, s.tokens DESC;

// name: open-stubs-by-urgency
// needs: Stub
// Tensions flagged but never explored: what to look at next.
MATCH (t:Stub {session: $session})
RETURN t.question AS question, t.urgency AS urgency, t.category AS category,
       t.observer AS observer, t.debate AS raised_in
ORDER BY t.urgency DESC
LIMIT 25;

// name: branch-tree
// needs: BRANCHES_FROM, EXPLORES
// Each branch debate, the tension it explores and the debate it branched from.
MATCH (b:Debate {session: $session})-[:BRANCHES_FROM]->(parent:Debate)
MATCH (b)-[:EXPLORES]->(t:Tension)
RETURN b.depth AS depth, b.origin AS origin, t.question AS explores, t.urgency AS urgency,
       parent.question AS branched_from, b.rounds AS rounds, b.converged AS converged
ORDER BY b.depth, t.urgency DESC;

// name: syntheses-with-parents
// needs: Synthesis, MERGES_INTO
// Merge nodes: which branches converged, how similar they were, and why they merged.
MATCH (x:Node)-[:MERGES_INTO]->(s:Synthesis {session: $session})
RETURN s.id AS synthesis, s.method AS method, s.similarity AS similarity, s.reason AS reason,
       s.shared_claim AS shared_claim,
       collect(coalesce(x.question, x.resolution)) AS parents, count(x) AS parent_count
ORDER BY parent_count DESC;

// name: unreconciled-contradictions
// needs: CONTRADICTS
// Debates that contradict each other and were never joined by a synthesis.
MATCH (a:Debate {session: $session})-[r:CONTRADICTS]->(b:Debate)
WHERE NOT EXISTS { MATCH (a)-[:MERGES_INTO]->(:Synthesis)<-[:MERGES_INTO]-(b) }
RETURN a.question AS debate, a.resolution AS says, b.question AS contradicted_by,
       b.resolution AS which_says, r.method AS method, r.reason AS why;

// name: main-to-synthesis-paths
// needs: Synthesis, MERGES_INTO, BRANCHES_FROM
// How each synthesis was reached: the chain of debates from the main debate down to it.
MATCH (main:Debate {session: $session, origin: 'main'})
MATCH p = (s:Synthesis {session: $session})<-[:MERGES_INTO]-(b:Debate)-[:BRANCHES_FROM*1..6]->(main)
RETURN s.id AS synthesis, [n IN reverse(nodes(p)) | coalesce(n.question, n.id)] AS path, length(p) AS hops
ORDER BY synthesis, hops;

// name: lateral-revisions-by-perspective
// needs: Turn
// Which perspectives change their mind after hearing their siblings.
MATCH (t:Turn {session: $session, phase: 'lateral'})
RETURN t.perspective AS perspective, count(t) AS lateral_turns,
       sum(CASE WHEN t.revised THEN 1 ELSE 0 END) AS revised,
       round(100.0 * sum(CASE WHEN t.revised THEN 1 ELSE 0 END) / count(t)) AS revised_pct
ORDER BY revised DESC, perspective;

// name: tensions-per-observer
// needs: Tension
// How much each observer lens flagged, how urgent it thought things were, and how
// much of it was explored.
MATCH (t:Tension {session: $session})
RETURN t.observer AS observer, count(t) AS flagged, round(100 * avg(t.urgency)) / 100 AS mean_urgency,
       sum(CASE WHEN t.status = 'explored' THEN 1 ELSE 0 END) AS explored,
       sum(CASE WHEN t.status = 'stub' THEN 1 ELSE 0 END) AS stubs
ORDER BY flagged DESC;

// name: superseded-stubs
// needs: SUPERSEDES
// Which later node answered a stub, with the sentence that answers it and the judge's reason.
MATCH (n:Node)-[r:SUPERSEDES]->(t:Tension {session: $session})
RETURN [l IN labels(n) WHERE NOT l IN ['Node', 'Stub']][0] AS by_kind, coalesce(n.question, n.resolution, n.id) AS by,
       t.question AS stub, r.claim AS answering_sentence, r.method AS method, r.reason AS why,
       r.similarity AS similarity;

// name: duplicate-stubs
// needs: DUPLICATES
// Questions raised twice in other words: each duplicate, the open stub it was merged
// into, where each was raised, and the judge's reason.
MATCH (d:Tension {session: $session})-[r:DUPLICATES]->(t:Tension)
RETURN t.question AS kept, t.debate AS kept_in, d.question AS duplicate, d.debate AS raised_in,
       r.method AS method, r.reason AS why, r.similarity AS similarity
ORDER BY r.similarity DESC;

// name: reference-cycles
// needs: REFERENCES-cycle
// Cycles of reference between debates or turns (allowed: relations are not structure).
MATCH p = (a:Node {session: $session})-[:REFERENCES*2..4]->(a)
RETURN [n IN nodes(p) | n.id] AS cycle, length(p) AS length
ORDER BY length
LIMIT 25;

// name: rounds-and-convergence
// needs: Round
// The rounds of every debate with the root's convergence score after each.
MATCH (d:Debate {session: $session})-[:HAS_ROUND]->(r:Round)
RETURN d.origin AS origin, d.question AS debate, r.number AS round, r.convergence_score AS convergence
ORDER BY d.created_at, r.number;

// name: where-tensions-were-flagged
// needs: FLAGGED_AT, BY
// The turn and agent that raised each selected or explored tension.
MATCH (t:Tension {session: $session})-[:FLAGGED_AT]->(turn:Turn)-[:BY]->(a:Agent)
WHERE t.status <> 'stub'
RETURN t.question AS tension, t.status AS status, turn.round AS round, turn.phase AS phase,
       a.name AS agent, a.perspective AS perspective
ORDER BY t.urgency DESC;

// name: dag-nodes-with-several-parents
// needs: MERGES_INTO
// The DAG is not a tree: nodes reached from several structural parents.
MATCH (n:Node {session: $session})<-[r:MERGES_INTO|SUPERSEDES]-(parent:Node)
WITH n, count(DISTINCT parent) AS parents
WHERE parents >= 2
RETURN [l IN labels(n) WHERE NOT l IN ['Node', 'Stub']][0] AS kind, n.id AS id, parents
ORDER BY parents DESC;

// name: what-the-final-integrates
// needs: Final, INTEGRATES
// Everything the root integrator read, by kind.
MATCH (f:Final {session: $session})-[:INTEGRATES]->(n:Node)
RETURN [l IN labels(n) WHERE NOT l IN ['Node', 'Stub']][0] AS kind, count(n) AS integrated,
       collect(coalesce(n.question, n.resolution, n.id))[0..5] AS examples;

// name: why-stubs-stayed-open
// needs: CHECKED_AGAINST
// Every revisit check of every stub: against which node, the verdict and the reason.
MATCH (t:Tension {session: $session})-[c:CHECKED_AGAINST]->(n:Node)
RETURN t.question AS stub, t.status AS status, [l IN labels(n) WHERE NOT l IN ['Node', 'Stub']][0] AS against,
       coalesce(n.question, n.resolution, n.id) AS checked_against, c.similarity AS similarity,
       c.verdict AS verdict, c.decision AS decision, c.reason AS reason
ORDER BY t.urgency DESC, c.at;

// name: turns-flagged-by-several-observers
// needs: FLAGGED_AT
// The turns more than one observer flagged: where a debate was most contested.
MATCH (t:Tension {session: $session})-[f:FLAGGED_AT]->(turn:Turn)
WITH turn, count(f) AS flags, collect(DISTINCT f.observer) AS observers, collect(DISTINCT t.question) AS questions
WHERE flags >= 2
RETURN turn.id AS turn, turn.agent AS agent, flags, observers, questions
ORDER BY flags DESC;

// name: agents-and-their-records
// needs: Persona, PLAYS
// The agents that persist across sessions: how many sessions each took part in, what it
// kept, its record (successes out of trials), and the seats it played in this session.
MATCH (p:Persona)
OPTIONAL MATCH (seat:Agent {session: $session})-[:PLAYS]->(p)
RETURN p.name AS agent, size(p.sessions) AS sessions, p.kept_total AS kept,
       p.successes AS successes, p.trials AS trials, p.record AS record_by_category,
       collect(seat.name) AS seats_here
ORDER BY p.successes DESC, p.name;

// name: sessions-this-month
// needs: Session
// Sessions started in the last 30 days (timestamps are temporal values in Neo4j).
MATCH (s:Session)
WHERE s.started_at >= datetime() - duration('P30D')
RETURN s.id AS session, s.title AS title, s.model AS model, s.protocol AS protocol, s.cpp AS cpp,
       s.depth AS depth, s.rounds AS rounds, s.strategy AS strategy, s.started_at AS started
ORDER BY s.started_at DESC;

// name: search-the-texts
// needs: fulltext, Turn
// Full-text search over questions, turns and resolutions (the index `dagmca db init`
// creates on Neo4j). Set the words to look for: :param search => 'revenue buses'
CALL db.index.fulltext.queryNodes('dagmca_text', $search) YIELD node, score
WHERE node.session = $session
RETURN [l IN labels(node) WHERE NOT l IN ['Node', 'Stub']][0] AS kind, node.id AS id,
       coalesce(node.question, node.text, node.resolution) AS text, score
ORDER BY score DESC
LIMIT 20;

// -- the emergence ledger: where each claim of the final answer came from -------------
// (`needs: ledger`: a session traced with --ledger, the default, or `dagmca ledger`.
// A claim of a text that a revisit changed has `superseded` set and is left out.)

// name: claims-no-agent-stated
// needs: ledger, Claim, STATED_IN
// The final answer's claims that no specialist's turn or passage sentence states, nor
// their parts from two specialists, by what the entailment check found: emergent (it
// follows, from two or more specialists' turns together), integrator (only a coordinator's
// or the root's text states it), inferred (it follows from the passage or one specialist)
// or unsupported (it does not follow: an invention). With the judge's reason.
MATCH (c:Claim {session: $session})-[:STATED_IN]->(:Final)
WHERE NOT c.superseded AND c.origin IN ['emergent', 'integrator', 'inferred', 'unsupported']
RETURN c.id AS claim, c.origin AS origin, c.text AS text, c.reason AS reason
ORDER BY c.number;

// name: perspectives-originating-final-claims
// needs: ledger, Claim, STATED_IN
// Which perspectives originate the claims that survive into the final answer: the one
// that first stated a claim, or each whose turns state a part of a recombined one.
MATCH (c:Claim {session: $session})-[:STATED_IN]->(:Final)
WHERE NOT c.superseded AND c.origin IN ['single', 'recombined']
UNWIND c.perspectives AS perspective
RETURN perspective, count(c) AS claims, sum(CASE c.origin WHEN 'single' THEN 1 ELSE 0 END) AS first_stated,
       sum(CASE c.origin WHEN 'recombined' THEN 1 ELSE 0 END) AS parts_of_recombined
ORDER BY claims DESC, perspective;

// name: how-a-claim-travelled
// needs: ledger, Claim, DERIVES_FROM
// Each claim of the final answer and every earlier text that states it or a part of it,
// in the order they were said: from the turn that first stated it, through the turns,
// resolutions and syntheses that carried it, to the final. `first` marks the turn it
// was first stated at.
MATCH (c:Claim {session: $session})-[:STATED_IN]->(:Final)
WHERE NOT c.superseded
MATCH (c)-[d:DERIVES_FROM]->(source:Node)
RETURN c.id AS claim, c.text AS text, c.origin AS origin, source.id AS source_id,
       [l IN labels(source) WHERE NOT l IN ['Node', 'Stub']][0] AS kind, source.agent AS agent,
       source.round AS round, d.verdict AS verdict, d.sentence AS sentence,
       source.id = c.first_stated_at AS first
ORDER BY c.number, source.seq;

// -- across sessions: a store built with `dagmca build` ---------------------------------

// name: stubs-answered-by-a-later-passage
// needs: build, SUPERSEDES
// Questions one passage's debate left open that a later passage answered: the stub, the
// session that asked it, the passage that answers it and the sentence that does.
MATCH (later:Session)-[r:SUPERSEDES]->(stub:Tension)
WHERE stub.session <> later.id
RETURN stub.session AS asked_in, stub.question AS question, later.id AS answered_by,
       later.title AS passage, r.claim AS answering_sentence, r.reason AS reason
ORDER BY asked_in, question;

// name: agents-across-passages
// needs: build, Persona, PLAYS
// Each persistent agent's record over the whole corpus: the passages it took part in and
// its successes out of trials by tension category.
MATCH (p:Persona)
OPTIONAL MATCH (seat:Agent)-[:PLAYS]->(p)
RETURN p.name AS agent, size(p.sessions) AS passages, count(DISTINCT seat.session) AS sessions_seated,
       p.successes AS successes, p.trials AS trials, p.record AS record_by_category
ORDER BY p.successes DESC, p.name;

// name: most-connected-debates
// needs: build, Debate
// The debates with the most relations to other debates and syntheses, in any session,
// and how many sessions those relations reach.
MATCH (d:Debate)-[r]-(other:Node)
WHERE type(r) IN ['REFERENCES', 'CONTRADICTS', 'ELABORATES', 'BRANCHES_FROM', 'MERGES_INTO']
WITH d, count(r) AS links, count(DISTINCT other.session) AS sessions
RETURN d.session AS session, d.id AS debate, d.question AS question, links, sessions
ORDER BY links DESC, debate
LIMIT 20;

// -- across samples of one passage: `dagmca stability`, `dagmca run --samples` ---------
// (`needs: stability`: a store that holds a study's findings. They belong to no session:
// these queries take no $session.)

// name: core-findings
// needs: stability, Finding, SEEN_IN
// Each study's core: the tensions, final claims and answers that at least half of its
// samples reach (k of n, with the 95% Wilson interval of that rate), the most recurring
// first, with the sessions each is seen in. A finding seen in one sample only is not here.
MATCH (f:Finding)-[:SEEN_IN]->(s:Session)
WHERE f.core
WITH f, collect(s.id) AS sessions
RETURN f.study AS study, f.aligns AS kind, f.k AS k, f.n AS n, f.lo AS lo, f.hi AS hi, f.text AS finding,
       sessions
ORDER BY study, f.rate DESC, kind, finding;
