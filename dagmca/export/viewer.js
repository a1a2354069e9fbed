(function () {
  "use strict";
  // The page draws what export chose for the first view (`shown`), laid out for this
  // window, and creates every other node only when it is unfolded or found: a session
  // of 20,000 nodes opens as fast as one of 200. All text is set with textContent.
  const DATA = JSON.parse(document.getElementById("dagmca-data").textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  };
  $("title").textContent = "dagmca — " + DATA.session;

  // -- indexes over every node, drawn or not ------------------------------------------
  const byId = new Map(DATA.nodes.map((n) => [n.id, n]));
  const groups = new Map(DATA.groups.map((g) => [g.id, g]));
  const push = (map, key, value) => { if (!map.has(key)) map.set(key, []); map.get(key).push(value); };
  const comesWith = new Map();   // node -> nodes drawn whenever it is
  const groupsOn = new Map();    // node -> the groups hung on it
  const ofDebate = new Map();    // debate -> its rounds, turns and tensions (creation order)
  const edgesOf = new Map();     // node -> indexes of its edges
  const flaggedAt = new Map();   // tension -> the turns that raised it
  const exploredBy = new Map();  // tension -> the debate that explored it
  const claimsOf = new Map();    // an answer (final, synthesis, resolution) -> its claims
  const membersOf = new Map();   // a finding -> its member in each session it recurs in
  for (const n of DATA.nodes) {
    if (n.with) push(comesWith, n.with, n.id);
    if (n.kind === "Round" || n.kind === "Turn" || n.kind === "Tension") push(ofDebate, n.debate, n.id);
  }
  for (const g of DATA.groups) push(groupsOn, g.anchor, g.id);
  DATA.edges.forEach((e, i) => {
    push(edgesOf, e.source, i); push(edgesOf, e.target, i);
    if (e.type === "FLAGGED_AT") push(flaggedAt, e.source, e.target);
    if (e.type === "EXPLORES") exploredBy.set(e.target, e.source);
    if (e.type === "STATED_IN") push(claimsOf, e.target, e.source);
    if (e.type === "AS") push(membersOf, e.source, e.target);
  });

  const lazyKinds = new Set(DATA.lazyKinds);
  const kindOn = new Map(DATA.kinds.map((k) => [k, !lazyKinds.has(k)]));
  const edgeOn = new Map(DATA.edgeTypes.map((t) => [t, true]));
  const unfolded = new Set();  // debates whose rounds and turns are drawn, groups open

  const cy = cytoscape({
    container: $("cy"), elements: [], layout: { name: "preset" },
    minZoom: 0.02, maxZoom: 4, wheelSensitivity: 0.3,
    style: [
      { selector: "node", style: { "background-color": "data(colour)", "label": "data(caption)", "font-size": 14,
        "text-wrap": "wrap", "text-max-width": 84, "text-valign": "bottom", "text-margin-y": 3,
        "border-width": 1, "border-color": "#374151", "width": 20, "height": 20 } },
      { selector: "node.Session", style: { "shape": "round-rectangle", "width": 56, "height": 26, "font-size": 14,
        "text-max-width": 240 } },
      { selector: "node.Debate", style: { "shape": "round-rectangle", "width": 36, "height": 22, "font-size": 14,
        "text-max-width": 112 } },
      { selector: "node.Tension, node.Group", style: { "shape": "diamond", "width": 14, "height": 14,
        "text-valign": "center", "text-halign": "right", "text-margin-x": 5, "text-margin-y": 0,
        "text-wrap": "ellipsis", "text-max-width": 170 } },
      { selector: "node.stub", style: { "border-style": "dashed" } },
      { selector: "node.Group", style: { "shape": "round-rectangle", "width": 18, "height": 12, "border-style": "dashed",
        "background-color": "#F3F4F6", "color": "#1D4ED8" } },
      { selector: "node.Synthesis", style: { "shape": "hexagon", "width": 34, "height": 30 } },
      { selector: "node.Final", style: { "shape": "star", "width": 40, "height": 40, "font-size": 14, "text-max-width": 240 } },
      { selector: "node.Synthesis, node.Integration", style: { "text-max-width": 190 } },
      { selector: "node.Round", style: { "shape": "rectangle", "width": 12, "height": 12, "font-size": 10,
        "text-valign": "center", "text-halign": "left", "text-margin-x": -4, "text-margin-y": 0 } },
      { selector: "node.Turn", style: { "width": 10, "height": 10, "label": "" } },
      { selector: "node.Turn:selected, node.Turn.match", style: { "label": "data(caption)", "font-size": 11,
        "text-background-color": "#FFFFFF", "text-background-opacity": 0.9 } },
      { selector: "node.Agent, node.Persona", style: { "shape": "ellipse" } },
      { selector: "node.Finding", style: { "shape": "tag", "width": 22, "height": 18, "text-max-width": 170 } },
      { selector: "edge", style: { "curve-style": "bezier", "target-arrow-shape": "triangle", "arrow-scale": 0.7,
        "width": 1, "line-color": "#9CA3AF", "target-arrow-color": "#9CA3AF" } },
      { selector: "edge.structure", style: { "width": 2.5, "line-color": "#4B5563", "target-arrow-color": "#4B5563" } },
      { selector: "edge.relation", style: { "line-style": "dashed", "width": 1.5, "line-color": "#7C3AED", "target-arrow-color": "#7C3AED" } },
      { selector: "edge.provenance", style: { "line-style": "dotted", "line-color": "#CBD5E1", "target-arrow-color": "#CBD5E1",
        "opacity": 0.6 } },
      { selector: "edge.fold", style: { "line-style": "dotted", "line-color": "#D1D5DB", "target-arrow-shape": "none" } },
      { selector: ".hidden", style: { "display": "none" } },
      { selector: ".faded", style: { "opacity": 0.15 } },
      { selector: "node.match", style: { "border-width": 4, "border-color": "#DC2626" } },
      { selector: "node:selected", style: { "border-width": 4, "border-color": "#2563EB" } },
    ],
  });

  // -- where things go: every size in px at zoom 1 -------------------------------------
  // A debate is a card: the debate on the left with its question below it, what comes
  // with it (the question it explored, its most urgent open ones, its groups) listed
  // to its right, one line each.
  const ITEM_H = 21, LIST_X = 124, CARD_W = 320, CARD_GAP = 24, ITEM_W = 190, FINDING_COLS = 5;
  const pos = new Map();
  const present = (id) => cy.getElementById(id).nonempty();

  function cardItems(d) {
    const mine = comesWith.get(d) || [];
    return [...mine.filter((id) => exploredBy.get(id) === d), ...mine.filter((id) => exploredBy.get(id) !== d),
      ...(groupsOn.get(d) || [])];
  }
  function cardHeight(d) { return Math.max(104, cardItems(d).length * ITEM_H + 12); }
  function placeCard(d, x, y) {  // (x, y): the card's top left
    pos.set(d, { x: x + 56, y: y + 14 });
    cardItems(d).forEach((id, k) => pos.set(id, { x: x + LIST_X, y: y + 6 + k * ITEM_H }));
  }
  function parentOf(d) {
    for (const i of edgesOf.get(d) || []) {
      const e = DATA.edges[i];
      if (e.type === "BRANCHES_FROM" && e.source === d) return e.target;
    }
    return null;
  }
  function levelsOf(debates) {
    const levels = new Map();
    for (const d of debates) push(levels, Number(byId.get(d).props.depth || 0), d);
    return [...levels.keys()].sort((a, b) => a - b).map((k) => levels.get(k));
  }
  // Debates by depth, each level wrapped into rows of `cols` cards; returns the height.
  function placeDebates(debates, cols, x0, y0, dry) {
    let y = y0;
    for (const row of levelsOf(debates)) {
      row.sort((a, b) => ((pos.get(parentOf(a)) || { x: 0 }).x - (pos.get(parentOf(b)) || { x: 0 }).x));
      for (let i = 0; i < row.length; i += cols) {
        const line = row.slice(i, i + cols);
        const width = line.length * CARD_W;
        if (!dry) line.forEach((d, k) => placeCard(d, x0 - width / 2 + k * CARD_W, y));
        y += Math.max(...line.map(cardHeight)) + CARD_GAP;
      }
    }
    return y - y0;
  }
  function placeRow(ids, y, spacing, x0) {
    ids.forEach((id, k) => pos.set(id, { x: x0 + (k - (ids.length - 1) / 2) * spacing, y: y }));
  }
  // One session's block, as many cards a row as fits this window best; returns its width.
  function placeSession(s, nodes, x0, box) {
    const of = (kind) => nodes.filter((n) => n.kind === kind).map((n) => n.id);
    const debates = of("Debate");
    const tail = ["Synthesis", "Integration", "Final"].filter((k) => of(k).length).length * 120;
    const top = of("Section").length ? 150 : 80;
    let best = 1, bestZoom = 0;
    for (let cols = 1; cols <= Math.max(1, debates.length); cols++) {
      const height = top + placeDebates(debates, cols, 0, 0, true) + tail;
      const zoom = Math.min(box.width / (cols * CARD_W), box.height / height);
      if (zoom > bestZoom) { best = cols; bestZoom = zoom; }
    }
    placeRow(of("Section"), -70, 110, x0);
    pos.set(s, { x: x0, y: 0 });
    (groupsOn.get(s) || []).forEach((g, k) => pos.set(g, { x: x0 + 120, y: k * ITEM_H }));
    let y = 60 + placeDebates(debates, best, x0, 60, false);
    for (const kind of ["Synthesis", "Integration", "Final"]) {
      const ids = of(kind);
      if (ids.length) { placeRow(ids, y, 200, x0); y += 120; }
    }
    // a study's findings, most recurring first: a grid of cards, a row at a time
    const findings = of("Finding");
    findings.forEach((id, k) => pos.set(id, { x: x0 + ((k % FINDING_COLS) - (FINDING_COLS - 1) / 2) * ITEM_W,
      y: 60 + Math.floor(k / FINDING_COLS) * 80 }));
    for (const g of findings.flatMap((f) => groupsOn.get(f) || [])) {  // the rest, folded, after the grid
      pos.set(g, { x: x0 - (FINDING_COLS - 1) / 2 * ITEM_W, y: 60 + Math.ceil(findings.length / FINDING_COLS) * 80 });
    }
    return findings.length ? Math.max(best * CARD_W, FINDING_COLS * ITEM_W) : best * CARD_W;
  }
  function placeFirstView() {
    const rect = $("cy").getBoundingClientRect();
    const box = { width: Math.max(200, rect.width - 48), height: Math.max(200, rect.height - 48) };
    const sessions = new Map();
    for (const n of DATA.nodes) if (n.shown) push(sessions, n.session, n);
    let right = 0;  // sessions side by side (`export --all`), in store order
    for (const [s, nodes] of sessions) {
      const before = new Set(pos.keys());
      const width = placeSession(s, nodes, 0, box);
      const shift = right === 0 ? 0 : right + CARD_W / 2 + width / 2;
      for (const [id, p] of pos) if (!before.has(id)) p.x += shift;
      right = shift + width / 2;
    }
  }
  // Where a node not in the first view goes when it is created.
  function placeLate(id) {
    if (pos.has(id)) return;
    const n = byId.get(id);
    const anchorPos = (a) => pos.get(a) || { x: 0, y: 0 };
    // A debate's rounds and turns: a row a round under its card, the turns as dots (the
    // panel has their text).
    if (n && n.kind === "Round") {
      const d = anchorPos(n.debate);
      const bottom = d.y - 14 + cardHeight(n.debate);
      pos.set(id, { x: d.x - 40, y: bottom + (Number(n.props.number || 1) - 1) * 18 });
    } else if (n && n.kind === "Turn") {
      const round = (ofDebate.get(n.debate) || []).find((r) => byId.get(r).kind === "Round" &&
        Number(byId.get(r).props.number) === Number(n.props.round));
      if (round) placeLate(round);
      const r = round ? anchorPos(round) : { x: anchorPos(n.debate).x - 40, y: anchorPos(n.debate).y + 90 };
      const k = (ofDebate.get(n.debate) || []).filter((t) => byId.get(t).kind === "Turn" &&
        Number(byId.get(t).props.round) === Number(n.props.round)).indexOf(id);
      pos.set(id, { x: r.x + 16 + k * 13, y: r.y });
    } else if (n && (n.kind === "Agent" || n.kind === "Persona")) {
      const others = DATA.nodes.filter((m) => m.kind === n.kind);
      pos.set(id, { x: (others.indexOf(n) - others.length / 2) * 60, y: n.kind === "Agent" ? -160 : -230 });
    } else if (n && n.kind === "Claim") {  // a column left of the answer it is stated in
      const at = anchorPos(n.props.stated_in);
      const k = (claimsOf.get(n.props.stated_in) || []).indexOf(id);
      pos.set(id, { x: at.x - 170, y: at.y + 30 + k * ITEM_H });
    } else if (n && n.group) {
      const g = groups.get(n.group);
      const k = g.members.indexOf(id), at = anchorPos(g.id);
      if (g.kind === "debates") {  // cards in rows of four below the group
        placeCard(id, at.x + (k % 4) * CARD_W, at.y + 40 + Math.floor(k / 4) * 200);
      } else {  // a list in columns below the group
        pos.set(id, { x: at.x + 20 + Math.floor(k / 25) * ITEM_W, y: at.y + ITEM_H * (1 + (k % 25)) });
      }
    } else {
      pos.set(id, anchorPos(n ? n.debate : ""));
    }
  }

  // -- creating elements -----------------------------------------------------------------
  const drawnEdges = new Set();
  function nodeElement(id) {
    const g = groups.get(id);
    if (g) {
      return { group: "nodes", data: { id: id, kind: "Group", caption: g.caption, colour: "#F3F4F6" },
        position: { ...pos.get(id) }, classes: "Group" };
    }
    const n = byId.get(id);
    return { group: "nodes", data: { id: id, kind: n.kind, caption: n.caption, debate: n.debate,
      colour: n.stub ? DATA.colours.Stub : (DATA.colours[n.kind] || "#D1D5DB") },
      position: { ...pos.get(id) }, classes: n.kind + (n.stub ? " stub" : "") };
  }
  // Draw these nodes, what comes with them, the groups hung on them and every edge
  // between drawn nodes.
  function draw(ids) {
    const todo = [...ids], adding = new Set();
    while (todo.length) {
      const id = todo.pop();
      if (adding.has(id) || present(id)) continue;
      adding.add(id);
      for (const w of comesWith.get(id) || []) todo.push(w);
      for (const g of groupsOn.get(id) || []) todo.push(g);
    }
    if (!adding.size) return;
    const order = [...adding];
    for (const id of order) if (byId.has(id) && byId.get(id).kind === "Debate") placeLate(id);
    for (const id of order) placeLate(id);
    const elements = order.map(nodeElement);
    for (const id of order) {
      const g = groups.get(id);
      if (g && (adding.has(g.anchor) || present(g.anchor))) {
        elements.push({ group: "edges", data: { id: "fold:" + id, source: g.anchor, target: id, type: "fold" }, classes: "fold" });
      }
      for (const i of edgesOf.get(id) || []) {
        if (drawnEdges.has(i)) continue;
        const e = DATA.edges[i];
        const other = e.source === id ? e.target : e.source;
        if (!(adding.has(other) || present(other))) continue;
        drawnEdges.add(i);
        elements.push({ group: "edges", data: { id: "e" + i, source: e.source, target: e.target, type: e.type },
          classes: DATA.edgeStyles[e.type] || "provenance" });
      }
    }
    cy.batch(() => cy.add(elements));
  }
  function undraw(ids) {
    const gone = cy.collection();
    for (const id of ids) gone.merge(cy.getElementById(id));
    for (const e of gone.connectedEdges()) if (e.id().startsWith("e")) drawnEdges.delete(Number(e.id().slice(1)));
    cy.remove(gone);
  }
  function toggleGroup(gid) {
    const g = groups.get(gid);
    const open = unfolded.has(gid);
    if (open) {
      unfolded.delete(gid);
      const ids = [];
      const collect = (id) => { ids.push(id); for (const w of comesWith.get(id) || []) collect(w);
        for (const h of groupsOn.get(id) || []) { unfolded.delete(h); ids.push(h); (groups.get(h).members).forEach(collect); } };
      g.members.forEach(collect);
      undraw(ids);
    } else {
      unfolded.add(gid);
      draw(g.members);
    }
    cy.getElementById(gid).data("caption", unfolded.has(gid) ? "fold " + g.members.length : g.caption);
  }
  function toggleDebate(d) {
    const inside = (ofDebate.get(d) || []).filter((id) => { const k = byId.get(id).kind; return k === "Round" || k === "Turn"; });
    if (unfolded.has(d)) { unfolded.delete(d); undraw(inside); } else { unfolded.add(d); draw(inside); }
  }
  // Draw a node wherever it is folded, and what it is folded in.
  function reveal(id) {
    if (present(id)) return;
    const n = byId.get(id);
    if (!n) return;
    if (n.kind === "Round" || n.kind === "Turn") {
      reveal(n.debate);
      if (!unfolded.has(n.debate)) toggleDebate(n.debate);
    } else if (n.group) {
      const g = groups.get(n.group);
      reveal(g.anchor);
      if (!unfolded.has(g.id)) toggleGroup(g.id);
    } else if (n.with) {
      reveal(n.with);
    }
    draw([id]);
    refresh();
  }

  // -- filters ---------------------------------------------------------------------------
  function nodeShown(n) {
    const kind = n.data("kind");
    if (kind === "Group") return kindOn.get("Tension") !== false || n.id().startsWith("group:debates");
    if (n.hasClass("stub") && kindOn.get("__stubs") === false) return false;
    if (!kindOn.get(kind)) return (kind === "Round" || kind === "Turn") && unfolded.has(n.data("debate"));
    return true;
  }
  function refresh() {
    cy.batch(() => {
      cy.nodes().forEach((n) => { n.toggleClass("hidden", !nodeShown(n)); });
      cy.edges().forEach((e) => {
        const on = e.data("type") === "fold" || edgeOn.get(e.data("type"));
        e.toggleClass("hidden", !on || e.source().hasClass("hidden") || e.target().hasClass("hidden"));
      });
    });
    const drawn = cy.nodes().filter((n) => !n.hasClass("hidden") && n.data("kind") !== "Group").length;
    $("counts").textContent = DATA.nodes.length + " nodes, " + DATA.edges.length + " edges (" + drawn + " drawn)";
  }
  function filterBox(container, name, colourOrStyle, on, change, isEdge) {
    const label = el("label");
    const box = el("input"); box.type = "checkbox"; box.checked = on; box.dataset.name = name;
    box.addEventListener("change", () => { change(box.checked); refresh(); });
    const mark = el("span");
    if (isEdge) { mark.className = "line " + colourOrStyle; } else { mark.className = "swatch"; mark.style.background = colourOrStyle; }
    label.append(box, mark, el("span", name));
    container.append(label);
  }
  for (const k of DATA.kinds) {
    filterBox($("kind-filters"), k, DATA.colours[k], kindOn.get(k), (v) => {
      kindOn.set(k, v);
      // A kind folded at first is drawn when it is switched on: agents and personas
      // all, rounds and turns those of every drawn debate.
      if (v && lazyKinds.has(k)) {
        const inDebate = k === "Round" || k === "Turn";
        draw(DATA.nodes.filter((n) => n.kind === k && (!inDebate || present(n.debate))).map((n) => n.id));
      }
    }, false);
  }
  filterBox($("kind-filters"), "Stub", DATA.colours.Stub, true, (v) => kindOn.set("__stubs", v), false);
  for (const t of DATA.edgeTypes) {
    filterBox($("edge-filters"), t, DATA.edgeStyles[t], true, (v) => edgeOn.set(t, v), true);
  }

  // -- the side panel: a debate read as text, a tension with where it came from -----------
  function link(id, text) {
    const a = el("a", text, "node");
    a.href = "#"; a.dataset.node = id;
    a.addEventListener("click", (evt) => { evt.preventDefault(); focus(id); });
    return a;
  }
  function section(title) { const h = el("h2", title); $("reading").append(h); return h; }
  function para(text, cls) { const p = el("p", text, cls || "text"); $("reading").append(p); return p; }
  function tensionLine(id) {
    const t = byId.get(id), li = el("li");
    li.append(link(id, String(t.props.question || id)),
      el("span", " — urgency " + Number(t.props.urgency || 0).toFixed(2) + ", " + (t.props.status || ""), "meta"));
    return li;
  }
  function readDebate(n) {
    const p = n.props;
    section("Question"); para(String(p.question || ""));
    const inside = (ofDebate.get(n.id) || []).map((id) => byId.get(id));
    const rounds = inside.filter((m) => m.kind === "Round").sort((a, b) => a.props.number - b.props.number);
    const turns = inside.filter((m) => m.kind === "Turn");
    const numbers = rounds.length ? rounds.map((r) => Number(r.props.number)) :
      [...new Set(turns.map((t) => Number(t.props.round)))].sort((a, b) => a - b);
    for (const number of numbers) {
      section("Round " + number);
      for (const t of turns.filter((m) => Number(m.props.round) === number)) {
        const box = el("div", undefined, "turn" + (t.props.degenerate ? " degenerate" : ""));
        const who = el("div", undefined, "who");
        who.append(link(t.id, String(t.props.agent || "")),
          el("span", " · " + (t.props.phase || "") + (t.props.degenerate ? " · degenerate" : ""), "meta"));
        box.append(who, el("p", String(t.props.text || "")));
        $("reading").append(box);
      }
    }
    const tensions = inside.filter((m) => m.kind === "Tension")
      .sort((a, b) => Number(b.props.urgency || 0) - Number(a.props.urgency || 0));
    section("Tensions (" + tensions.length + ")");
    const list = el("ul", undefined, "links");
    for (const t of tensions) list.append(tensionLine(t.id));
    $("reading").append(list);
    section("Resolution"); para(String(p.resolution || "(none yet)"));
  }
  function readTension(n) {
    const p = n.props;
    section("Question"); para(String(p.question || ""));
    para("urgency " + Number(p.urgency || 0).toFixed(2) + " · " + (p.status || "") + " · " + (p.category || "") +
      " · observer " + (p.observer || ""), "meta");
    if (p.rationale) { section("Why"); para(String(p.rationale)); }
    const raised = flaggedAt.get(n.id) || [];
    section("Raised at");
    const list = el("ul", undefined, "links");
    for (const turn of raised) {
      const t = byId.get(turn), li = el("li");
      if (!t) { li.textContent = turn; list.append(li); continue; }
      li.append(link(turn, (t.props.agent || "") + " · " + (t.props.phase || "") + " · round " + (t.props.round || "")));
      li.append(el("p", String(t.props.text || ""), "text"));
      list.append(li);
    }
    if (!raised.length) list.append(el("li", "(no turn recorded)"));
    $("reading").append(list);
    section("Explored by");
    const by = exploredBy.get(n.id);
    if (by && byId.has(by)) $("reading").append(link(by, String(byId.get(by).props.question || by)));
    else para(p.status === "stub" ? "not explored: an open stub" : "not explored", "meta");
    if (n.debate && byId.has(n.debate)) { section("In debate"); $("reading").append(link(n.debate, byId.get(n.debate).caption)); }
  }
  // The ledger: an answer lists its claims; a claim, the texts it derives from.
  function derivedFrom(n) {
    let checks = [];
    try { checks = JSON.parse(n.props.checks || "[]"); } catch (err) { checks = []; }
    return checks.filter((c) => c.verdict !== "unrelated" && byId.has(c.node));
  }
  function readClaims(id) {
    const claims = claimsOf.get(id) || [];
    section("Claims (" + claims.length + ")");
    const list = el("ul", undefined, "links");
    for (const c of claims) {
      const li = el("li"), claim = byId.get(c);
      const a = el("a", String(claim.props.text || c), "node");
      a.href = "#"; a.dataset.node = c;
      a.addEventListener("click", (evt) => { evt.preventDefault(); traceClaim(c); });
      li.append(el("span", String(claim.props.origin || "") + " ", "meta origin"), a);
      list.append(li);
    }
    $("reading").append(list);
  }
  function readClaim(n) {
    section("Claim"); para(String(n.props.text || ""));
    para(String(n.props.origin || "") + ": " + String(n.props.reason || ""), "meta");
    const from = derivedFrom(n);
    section("Derives from (" + from.length + ")");
    const list = el("ul", undefined, "links");
    for (const c of from) {
      const t = byId.get(c.node), li = el("li");
      // the passage is the session's node: a claim it states, or that follows from it
      const who = t.kind === "Turn" ? (t.props.agent || "") + " · " + (t.props.phase || "") + " · round " + (t.props.round || "")
        : t.kind === "Session" ? "the passage" : t.caption;
      li.append(el("span", c.verdict + " ", "meta"), link(c.node, who));
      if (c.sentence) li.append(el("p", String(c.sentence), "text"));
      list.append(li);
    }
    if (!from.length) list.append(el("li", "(no text states it, a part of it, or what it follows from)"));
    $("reading").append(list);
    if (byId.has(n.props.stated_in)) { section("Stated in"); $("reading").append(link(n.props.stated_in, byId.get(n.props.stated_in).caption)); }
  }
  // A finding across samples: how many runs reach it, and its member in each.
  function readFinding(n) {
    const p = n.props;
    section("Finding (" + (p.aligns || "") + ")"); para(String(p.text || ""));
    para("in " + p.k + " of " + p.n + " runs (95% interval " + Number(p.lo).toFixed(2) + "-" + Number(p.hi).toFixed(2) +
      ")" + (p.core ? ", in the core: at least half the runs" : ""), "meta");
    const members = membersOf.get(n.id) || [];
    section("Seen as (" + members.length + ")");
    const list = el("ul", undefined, "links");
    for (const m of members) {
      const node = byId.get(m), li = el("li");
      if (!node) { li.textContent = m; list.append(li); continue; }
      li.append(el("span", node.session + " ", "meta"), link(m, node.caption));
      list.append(li);
    }
    $("reading").append(list);
  }
  // Draw a claim and the texts it derives from, and select them all.
  function traceClaim(id) {
    const n = byId.get(id);
    if (!n) return;
    const ids = [id, ...derivedFrom(n).map((c) => c.node)];
    for (const x of ids) reveal(x);
    cy.nodes(":selected").unselect();
    const chosen = cy.collection();
    for (const x of ids) chosen.merge(cy.getElementById(x));
    chosen.removeClass("hidden");
    chosen.select();
    cy.fit(chosen, 48);
    showDetails(id);
  }
  function readGroup(g) {
    section(g.caption);
    const list = el("ul", undefined, "links");
    for (const id of g.members) {
      if (byId.get(id).kind === "Tension") list.append(tensionLine(id));
      else { const li = el("li"); li.append(link(id, byId.get(id).caption)); list.append(li); }
    }
    $("reading").append(list);
  }
  function openPanel(on) {
    if (document.body.classList.contains("reading") === on) return;
    document.body.classList.toggle("reading", on);
    cy.resize();  // the graph's box changed
  }
  $("close").addEventListener("click", () => openPanel(false));
  function showDetails(id) {
    const g = groups.get(id), n = byId.get(id);
    openPanel(true);
    $("reading").replaceChildren();
    $("details-list").replaceChildren();
    if (g) { $("details-hint").textContent = "Group (click it to unfold)"; readGroup(g); return; }
    $("details-hint").textContent = n.kind + (n.stub ? " (stub)" : "");
    if (n.kind === "Debate") readDebate(n);
    else if (n.kind === "Tension") readTension(n);
    else if (n.kind === "Claim") readClaim(n);
    else if (n.kind === "Finding") readFinding(n);
    if (claimsOf.has(n.id)) readClaims(n.id);
    if (["Debate", "Tension", "Claim", "Finding"].includes(n.kind) || claimsOf.has(n.id)) section("Every property");
    for (const [key, value] of Object.entries(n.props)) {
      let text = value;
      if (key === "revisit_checks" || key === "config" || key === "checks") {
        try { text = JSON.stringify(JSON.parse(value), null, 1); } catch (err) { text = String(value); }
      } else if (typeof value !== "string") {
        text = JSON.stringify(value);
      }
      $("details-list").append(el("dt", key), el("dd", text));
    }
  }
  function focus(id) {
    reveal(id);
    const node = cy.getElementById(id);
    if (node.empty()) return;
    cy.nodes(":selected").unselect();
    node.select();
    if (!node.visible()) { node.removeClass("hidden"); }
    cy.center(node);
    showDetails(id);
  }
  cy.on("tap", "node", (evt) => {
    const n = evt.target;
    showDetails(n.id());
    if (n.data("kind") === "Debate") toggleDebate(n.id());
    else if (n.data("kind") === "Group") toggleGroup(n.id());
    else if (n.data("kind") === "Claim") traceClaim(n.id());
    refresh();
    const p = n.renderedPosition();  // the panel may have covered it
    if (p.x < 0 || p.y < 0 || p.x > cy.width() || p.y > cy.height()) cy.center(n);
  });

  // -- search: over every node, drawn or not ----------------------------------------------
  let haystack = null, timer = null, hits = [];
  function search(q) {
    q = q.trim().toLowerCase();
    if (haystack === null) haystack = DATA.nodes.map((n) => JSON.stringify(n.props).toLowerCase());
    hits = q ? DATA.nodes.filter((n, i) => haystack[i].includes(q)).map((n) => n.id) : [];
    const set = new Set(hits);
    cy.batch(() => {
      cy.elements().removeClass("match faded");
      if (!q) return;
      cy.elements().filter((e) => !(e.isNode() && set.has(e.id()))).addClass("faded");
      cy.nodes().filter((n) => set.has(n.id())).addClass("match");
    });
    $("reading").replaceChildren();
    $("details-list").replaceChildren();
    openPanel(Boolean(q));
    if (!q) { $("details-hint").textContent = "Click a node."; return hits; }
    $("details-hint").textContent = hits.length + " match" + (hits.length === 1 ? "" : "es") +
      (hits.length ? " (Enter draws them all; click one to go to it)" : "");
    const list = el("ul", undefined, "links");
    for (const id of hits.slice(0, 200)) {
      const li = el("li"); li.append(link(id, byId.get(id).caption), el("span", " " + byId.get(id).kind, "meta"));
      list.append(li);
    }
    if (hits.length > 200) list.append(el("li", "… and " + (hits.length - 200) + " more", "meta"));
    $("reading").append(list);
    return hits;
  }
  $("search").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => search($("search").value), 150);
  });
  $("search").addEventListener("keydown", (evt) => {
    if (evt.key !== "Enter") return;
    search($("search").value);
    for (const id of hits.slice(0, 500)) reveal(id);
    search($("search").value);
  });
  const fitDrawn = () => cy.fit(cy.nodes().filter((n) => !n.hasClass("hidden")), 24);
  $("fit").addEventListener("click", fitDrawn);

  // -- the first view ----------------------------------------------------------------------
  // Fitted, unless that makes labels too small to read (a very large session, or many):
  // then at the smallest legible zoom, from the top (the session and its first
  // debates); Fit shows the whole.
  const LEGIBLE_PX = 9.5, FONT = 14;
  placeFirstView();
  draw(DATA.nodes.filter((n) => n.shown).map((n) => n.id));
  refresh();
  fitDrawn();
  if (cy.zoom() * FONT < LEGIBLE_PX) {
    const bb = cy.nodes().filter((n) => !n.hasClass("hidden")).boundingBox();
    const zoom = LEGIBLE_PX / FONT;
    cy.zoom(zoom);
    const wide = (bb.x2 - bb.x1) * zoom > cy.width();  // several sessions: the first, from the left
    cy.pan({ x: wide ? 24 - bb.x1 * zoom : cy.width() / 2 - ((bb.x1 + bb.x2) / 2) * zoom, y: 24 - bb.y1 * zoom });
  }
  window.dagmca = { cy: cy, ready: true, nodeCount: DATA.nodes.length, edgeCount: DATA.edges.length,
    showDetails: showDetails, reveal: reveal, focus: focus, search: search, traceClaim: traceClaim };
})();
