import { App, applyDocumentTheme } from "@modelcontextprotocol/ext-apps";

(function () {
  "use strict";
  // Host text in results is untrusted: it is only ever set with textContent, SVG text
  // nodes or setAttribute, never parsed as markup.
  //
  // What is drawn is what the results say in their typed fields: a site's state is
  // SiteStatus.state (status), DiagnosedSite.state (diagnose) or the outcome of an
  // operation that ran; a link is SiteStatus's LinkStatus.connected; a listener its
  // ListenerStatus.state. No text a host wrote (unit, container, router) is compared here.
  // A result that says no state (a plan, a diagnose without states) draws none.
  var SVGNS = "http://www.w3.org/2000/svg";
  // The site conditions status gives (models.SiteCondition), then an operation's outcomes
  // that are no condition (skipped, failed), then what is drawn when a result says none.
  var STATES = ["up", "stopped", "not-set-up", "unreachable", "stale", "degraded", "unknown",
    "skipped", "failed", "not-read", "not-reported"];
  var CONDITIONS = STATES.slice(0, 7);
  var STATE_LABEL = {
    up: "up", stopped: "stopped", "not-set-up": "not set up", unreachable: "unreachable",
    stale: "stale", degraded: "degraded", unknown: "unknown", skipped: "skipped",
    failed: "failed", "not-read": "not read", "not-reported": "no state given"
  };
  var STATE_MEANING = {
    up: "the router runs",
    stopped: "the router is stopped (as asked, or never started)",
    "not-set-up": "setup has not been done there",
    unreachable: "the host or cluster could not be reached",
    stale: "Skupper says Ready but the router is not running, and nothing asked for that",
    degraded: "the router runs but something it needs is off",
    unknown: "read, but what was read cannot decide",
    skipped: "the operation did not touch it",
    failed: "the operation failed there",
    "not-read": "diagnose could not read it",
    "not-reported": "this result says nothing of its state (call status)"
  };
  var LISTENER_STATES = ["serving", "closing", "closed", "unknown"];
  // a model's readiness as status(readiness=true) gives it (models.ReadinessState): shown
  // as given, never judged here
  var READINESS_STATES = ["ready", "loading", "sleeping", "saturated", "not-serving",
    "route-down", "provider-stopped", "provider-skipped"];
  var POOL_STATES = ["serving", "degraded", "down", "unknown"];
  // a pool's and a backend's state in the listener dots' colours
  var POOL_DOT = { serving: "f-serving", degraded: "f-closing", down: "f-closed", unknown: "f-listener-unknown",
    live: "f-serving", "not-live": "f-closed" };
  var LINK_STATES = [["connected", "link connected"], ["not-connected", "link not connected"],
    ["unknown", "link not read (its dialling site was not read)"]];
  var LIFECYCLE = ["setup", "up", "down", "teardown"];

  // ---- state: the results received, newest last ----------------------------------------
  var results = [];  // [kind, result] pairs; kind: status|setup|up|down|teardown|diagnose|check

  function kindOf(result) {
    if (!result || typeof result !== "object") return null;
    if (typeof result.operation === "string") return result.operation;
    if (Array.isArray(result.findings)) return "diagnose";
    if (Array.isArray(result.checks)) return "check";
    if (Array.isArray(result.sites) && Array.isArray(result.links)) return "status";
    return null;
  }

  function addResult(result) {
    var kind = kindOf(result);
    if (!kind) return false;
    results = results.filter(function (pair) {
      // one of each kind; a plan and a real call of the same operation are kept apart
      return !(pair[0] === kind && !!pair[1].plan === !!result.plan);
    });
    results.push([kind, result]);
    return true;
  }

  function str(value) { return value === null || value === undefined ? "" : String(value); }
  function arr(value) { return Array.isArray(value) ? value : []; }
  function condition(value) { return CONDITIONS.indexOf(value) >= 0 ? value : null; }

  // An operation that ran says, per site, the state it left it in.
  function outcomeState(kind, outcome) {
    if (outcome === "up") return "up";
    if (outcome === "removed") return "not-set-up";
    if (outcome === "down") return kind === "teardown" ? "not-set-up" : "stopped";
    if (outcome === "skipped" || outcome === "failed") return outcome;
    return null;
  }

  // ---- the model drawn: sites, links, listeners, actions, findings, plan -----------------
  function build() {
    var sites = {}, order = [], bySite = {};
    function site(host, info) {
      if (!sites[host]) {
        sites[host] = { host: host, site: "", role: "", platform: "", state: null, from: "",
          reason: "", notes: [], findings: [], listeners: [], pools: [], drift: null, plan: null,
          diagnosed: false };
        order.push(host);
      }
      var s = sites[host];
      if (info) {
        if (info.site) { s.site = str(info.site); bySite[s.site] = host; }
        if (info.role) s.role = str(info.role);
        if (info.platform) s.platform = str(info.platform);
      }
      return s;
    }
    function said(s, state, from, reason, notes) {
      s.state = state; s.from = from; s.reason = str(reason); s.notes = notes;
    }
    var model = { sites: sites, order: order, links: [], listeners: [], pools: [], actions: [],
      findings: [], plan: null, last: null, summaries: [], checks: null, kinds: [] };
    results.forEach(function (pair) {
      var kind = pair[0], r = pair[1];
      model.kinds.push(kind + (r.plan ? " (plan)" : ""));
      if (r.summary) model.summaries.push([kind + (r.plan ? " (plan)" : ""), str(r.summary)]);
      if (kind === "status") {
        arr(r.sites).forEach(function (x) {
          var s = site(str(x.host), x);
          var notes = [];
          if (x.detail) notes.push(str(x.detail));
          said(s, condition(x.state) || "unknown", "status", x.state_reason, notes);
          if (!condition(x.state)) s.reason = "status gave no state the view knows";
          s.drift = Array.isArray(x.drift) ? x.drift.map(str) : null;
        });
        model.links = arr(r.links).map(function (l) {
          var state = l.connected === true ? "connected" : l.connected === false ? "not-connected" : "unknown";
          return { from: str(l.from), to: str(l.to), endpoint: str(l.endpoint),
            status: str(l.status), probe: l.tcp_probe, state: state };
        });
        model.listeners = arr(r.listeners).slice();
        model.pools = arr(r.pools).slice();
        model.actions = arr(r.model_actions);
      } else if (kind === "diagnose") {
        arr(r.sites).forEach(function (x) {
          var s = site(str(x.host), x);
          var state = condition(x.state);
          if (state) said(s, state, "diagnose", "", []);
          else if (x.read === false) said(s, "not-read", "diagnose", "", []);
          s.findings = [];
          s.diagnosed = true;
        });
        model.findings = arr(r.findings);
      } else if (kind === "check") {
        model.checks = r;
      } else if (r.plan) {
        model.plan = r;
        arr(r.sites).forEach(function (x) {
          site(str(x.host), x).plan = { operation: kind, outcome: str(x.outcome),
            changed: x.changed === true, reason: str(x.reason),
            steps: arr(x.steps).map(function (st) { return str(st && st.name); }) };
        });
      } else {
        model.last = r;
        arr(r.sites).forEach(function (x) {
          var s = site(str(x.host), x);
          said(s, outcomeState(kind, x.outcome) || "unknown", kind, "",
            x.reason ? [str(x.reason)] : []);
        });
        if (arr(r.listeners).length) model.listeners = arr(r.listeners).slice();
        model.actions = arr(r.model_actions);
      }
    });
    // links name sites: ones not known yet are drawn as sites of their own
    model.links.forEach(function (l) {
      [l.from, l.to].forEach(function (name) { if (!bySite[name]) { site(name, { site: name }); } });
      l.fromHost = bySite[l.from] || l.from;
      l.toHost = bySite[l.to] || l.to;
    });
    model.listeners.forEach(function (x) {
      var host = bySite[str(x.site)] || str(x.site);
      var s = site(host, { site: str(x.site) });
      var state = LISTENER_STATES.indexOf(x.state) >= 0 ? x.state : "unknown";
      s.listeners.push({ port: str(x.port), key: str(x.routing_key), provider: str(x.provider),
        endpoint: str(x.endpoint),
        state: state, stated: LISTENER_STATES.indexOf(x.state) >= 0, detail: str(x.detail),
        service: str(x.service), closes: x.closes_within, ready: readinessOf(x.readiness),
        models: arr(x.model_ids).map(str).join(", "), url: str(x.base_url) });
    });
    // a pool as status decided it (pools.pool_rows): its backends' liveness and the
    // preferred one are drawn as given, never judged here; a pool with a listener on the
    // Kubernetes site too carries that one's row (x.cluster), drawn in the cluster's box
    function addPool(x) {
      var host = bySite[str(x.site)] || str(x.site);
      var s = site(host, { site: str(x.site) });
      var state = POOL_STATES.indexOf(x.state) >= 0 ? x.state : "unknown";
      var preferred = x.preferred ? str(x.preferred) : "";
      s.pools.push({ name: str(x.name), port: str(x.port), strategy: str(x.strategy),
        state: state, bound: x.bound, preferred: preferred, detail: str(x.detail),
        resource: x.resource ? str(x.resource) : "", service: x.service ? str(x.service) : "",
        backends: arr(x.backends).map(function (b) {
          return { provider: str(b.provider), profile: str(b.profile),
            live: b.live === true ? "live" : b.live === false ? "not-live" : "unknown",
            why: str(b.why), preferred: preferred !== "" && str(b.provider) === preferred };
        }) });
      if (x.cluster && typeof x.cluster === "object") addPool(x.cluster);
    }
    model.pools.forEach(addPool);
    model.findings.forEach(function (f) {
      var host = sites[str(f.host)] ? str(f.host) : (bySite[str(f.site)] || str(f.host));
      site(host, { site: str(f.site) }).findings.push(f);
    });
    order.forEach(function (host) {
      var s = sites[host];
      if (!s.state) s.state = "not-reported";
      // a diagnose result names no role: the topology's local and cluster names are the
      // usual consumers; the rest are drawn with the providers
      if (!s.role) s.role = /^(local|crc)$/.test(host) ? "consumer" : "provider";
    });
    return model;
  }

  // ---- where the VAN is in its lifecycle ------------------------------------------------
  function count(list, state) { return list.filter(function (s) { return s.state === state; }).length; }

  function where(model) {
    var hosts = model.order.map(function (h) { return model.sites[h]; });
    if (!hosts.length) return { stage: null, text: "" };
    var stated = hosts.filter(function (s) { return s.state !== "not-reported" && s.state !== "not-read"; });
    if (!stated.length) {
      var why = model.plan ? "a plan says what would change, not what is" :
        "diagnose says what it found, not each site's state";
      return { stage: null, text: "not known from this result (" + why + "; status tells)" };
    }
    var n = stated.length, up = count(stated, "up");
    var rest = STATES.filter(function (st) { return st !== "up"; }).map(function (st) {
      var k = count(stated, st);
      return k ? k + " " + STATE_LABEL[st] : "";
    }).filter(Boolean).join(", ");
    var untold = hosts.length - n;
    var tail = untold ? "; " + untold + " without a state in this result" : "";
    var torn = model.last && model.last.operation === "teardown";
    if (up === n) return { stage: "up", text: "all up (" + up + " of " + n + " sites)" + tail };
    if (up > 0) return { stage: "up", text: "some up (" + up + " of " + n + " sites; " + rest + ")" + tail };
    if (count(stated, "not-set-up") === n) {
      return { stage: torn ? "teardown" : null, text: (torn ? "not set up (torn down)" : "not set up") + tail };
    }
    if (count(stated, "stopped") === n) return { stage: "down", text: "stopped (no site up)" + tail };
    return { stage: count(stated, "stopped") ? "down" : null, text: "no site up (" + rest + ")" + tail };
  }

  // ---- SVG helpers ----------------------------------------------------------------------
  function el(name, attrs, parent) {
    var node = document.createElementNS(SVGNS, name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (parent) parent.appendChild(node);
    return node;
  }
  function text(parent, x, y, content, cls, maxChars) {
    var full = str(content);
    var shown = maxChars && full.length > maxChars ? full.slice(0, Math.max(1, maxChars - 1)) + "\u2026" : full;
    var node = el("text", { x: x, y: y }, parent);
    if (cls) node.setAttribute("class", cls);
    node.textContent = shown;
    if (shown !== full) { el("title", {}, node).textContent = full; }
    return node;
  }
  function html(name, content, parent, cls) {
    var node = document.createElement(name);
    if (content !== undefined && content !== null) node.textContent = str(content);
    if (cls) node.className = cls;
    if (parent) parent.appendChild(node);
    return node;
  }
  // a pill fits its name as the browser sets it (bold 12px); 8 px a character if it cannot say
  var measure = null;
  function textWidth(content) {
    try {
      if (!measure) {
        measure = document.createElement("canvas").getContext("2d");
        measure.font = "700 12px system-ui, -apple-system, \"Segoe UI\", sans-serif";
      }
      return measure.measureText(content).width;
    } catch (e) { return content.length * 8; }
  }
  function pillWidth(state) { return Math.ceil(textWidth(STATE_LABEL[state]) + 18); }
  // the state's name on its colour: what a person reads, with or without colour
  function pill(parent, x, y, state) {
    var g = el("g", { "class": "pill-" + state, transform: "translate(" + x + "," + y + ")" }, parent);
    var none = state === "not-reported";
    el("rect", { width: pillWidth(state), height: 20, rx: 10,
      "class": "pill " + (none ? "none" : "f-" + state) }, g);
    text(g, 8, 14, STATE_LABEL[state], "pill-text" + (none ? " none" : ""));
    return g;
  }

  // a listener's model readiness (ModelReading): its state and the load its engine told
  function readinessOf(r) {
    if (!r || typeof r !== "object") return null;
    var told = [];
    if (typeof r.running === "number") told.push("running " + r.running);
    if (typeof r.waiting === "number") told.push("waiting " + r.waiting);
    if (typeof r.kv_cache_used === "number") told.push("kv " + Math.round(r.kv_cache_used * 100) + "%");
    arr(r.loaded_models).forEach(function (m) {
      var share = m && typeof m.vram_share === "number" ? " (" + Math.round(m.vram_share * 100) + "% VRAM)" : "";
      told.push("loaded " + str(m && m.name).slice(0, 60) + share);
    });
    if (Array.isArray(r.loaded_models) && !r.loaded_models.length) told.push("nothing loaded");
    return { state: READINESS_STATES.indexOf(r.state) >= 0 ? r.state : "not given",
      load: told.join(", "), reason: str(r.reason) };
  }

  function listenerLine(l) {
    var to = l.endpoint || l.provider || l.key;
    var line = ":" + l.port + " \u2192 " + to + "  " + (l.stated ? l.state : "state not given");
    if (l.state === "closing" && typeof l.closes === "number") line += " (closes within ~" + Math.round(l.closes) + " s)";
    if (l.ready) line += "  model " + l.ready.state + (l.ready.load ? " (" + l.ready.load + ")" : "");
    if (l.models) line += "  " + l.models;
    if (l.url) line += " at " + l.url;
    return line;
  }

  function poolLine(p) {
    return "pool " + p.name + " :" + p.port + " (" + p.strategy + ")  " + p.state +
      (p.bound === false ? ", port not bound" : "") +
      (p.resource ? "; controller: " + p.resource : "") + (p.service ? "; " + p.service : "");
  }

  function backendLine(b) {
    var word = b.live === "live" ? "live" : b.live === "not-live" ? "not live" : "not read";
    return "  \u21b3 " + b.provider + " (" + b.profile + "): " + word + (b.preferred ? "  \u2605 preferred" : "");
  }

  // What a plan says of a site, decided once for its box, its dot, its mark and the strip:
  // the operation would refuse there (failed or skipped: nothing would be done), would
  // change it, or would leave it as it is.
  function planMark(p) {
    if (p.outcome === "skipped" || p.outcome === "failed") return "would-refuse";
    return p.changed ? "would-change" : "no-change";
  }

  function planLine(p) {
    var head = p.operation + " (plan): ";
    var mark = planMark(p);
    if (mark === "would-refuse") return head + "would be " + p.outcome + (p.reason ? ": " + p.reason : "");
    return head + (mark === "would-change" ? "would change \u2192 " + p.outcome : "no change (" + p.outcome + ")");
  }

  // Text in rows of at most `chars` characters, broken at spaces, else after punctuation
  // (an address or a path), a word cut only when nothing else can: nothing is cut off.
  function wrap(content, chars) {
    var rows = [], row = "";
    var max = Math.max(8, chars);
    str(content).split(/(\s+)/).forEach(function (piece) {
      if (!piece) return;
      if (/^\s+$/.test(piece)) { if (row) row += " "; return; }
      while (piece.length) {
        if ((row + piece).length <= max) { row += piece; piece = ""; break; }
        if (row.trim()) { rows.push(row.trimEnd()); row = ""; continue; }
        var cut = -1;
        for (var i = max - 1; i > 0; i--) { if (/[\/:.,;\-_=&?)\]]/.test(piece.charAt(i - 1))) { cut = i; break; } }
        if (cut < 0) cut = max;
        rows.push(piece.slice(0, cut));
        piece = piece.slice(cut);
      }
    });
    if (row.trim() || !rows.length) rows.push(row.trimEnd());
    return rows;
  }

  function linkWord(l) {
    return l.state === "connected" ? "connected" : l.state === "unknown" ? "not read" :
      "not connected" + (l.probe === false ? " (no TCP)" : "");
  }

  // links: those that leave this box, written in it where the diagram cannot run them
  // side by side (narrow): each names where it goes, in its own line style
  function boxLines(s, links) {
    var lines = [];
    lines.push({ t: [s.site, s.platform].filter(Boolean).join(" \u00b7 "), cls: "small" });
    if (s.reason) lines.push({ t: s.reason, cls: "small" });
    s.notes.slice(0, 2).forEach(function (n) { lines.push({ t: n, cls: "small" }); });
    if (s.drift && s.drift.length) lines.push({ t: "drift: " + s.drift.join("; "), cls: "small" });
    if (s.plan) {
      lines.push({ t: planLine(s.plan), dot: "f-" + planMark(s.plan) });
      s.plan.steps.forEach(function (st) { lines.push({ t: "  step: " + st, cls: "small" }); });
    }
    s.listeners.forEach(function (l) {
      lines.push({ t: listenerLine(l), dot: l.state === "unknown" ? "f-listener-unknown" : "f-" + l.state, listener: l });
    });
    s.pools.forEach(function (p) {
      lines.push({ t: poolLine(p), dot: POOL_DOT[p.state], pool: p });
      p.backends.forEach(function (b) {
        lines.push({ t: backendLine(b), dot: POOL_DOT[b.live], backend: b, of: p });
      });
    });
    s.findings.forEach(function (f) {
      lines.push({ t: str(f.severity) + ": " + str(f.id) + " \u2014 " + str(f.symptom), dot: "f-" + str(f.severity), finding: f });
    });
    if (s.diagnosed && !s.findings.length) lines.push({ t: "diagnose: no finding", cls: "small" });
    (links || []).forEach(function (l) {
      if (l.fromHost === s.host) lines.push({ t: "link \u2192 " + l.toHost + ": " + linkWord(l), swatch: l });
    });
    return lines;
  }

  // ---- the diagram ----------------------------------------------------------------------
  var LANE = 10;  // px between two links that run side by side along a box's edge

  function drawDiagram(model, width) {
    var narrow = width < 640;
    var consumers = model.order.filter(function (h) { return model.sites[h].role === "consumer"; });
    var providers = model.order.filter(function (h) { return model.sites[h].role !== "consumer"; });
    var known = function (h) { return consumers.indexOf(h) >= 0 || providers.indexOf(h) >= 0; };
    var drawn = model.links.filter(function (l) { return known(l.fromHost) && known(l.toHost); });
    var between = function (l) { return model.sites[l.fromHost].role === model.sites[l.toHost].role; };
    // Lanes: a link between two boxes of one column runs along that column's left edge
    // (in its own lane, never under a box); narrow, every link does, left or right.
    // A link between two boxes of a column is short: it takes the lane nearest the boxes,
    // so that the longer links run outside it and never cross its ends.
    var lanes = { left: 0, right: 0 };
    drawn.forEach(function (l, i) {
      if (!narrow || between(l)) return;
      l.side = i % 2 === 0 ? "right" : "left";
      l.lane = lanes[l.side]++;
    });
    drawn.forEach(function (l) {
      if (!between(l)) return;
      l.side = "left";
      l.lane = lanes.left++;
    });
    var W = Math.max(320, Math.round(width));
    var LH = 18, PAD = 10, GAP = 16;
    var leftGutter = lanes.left ? 8 + LANE * lanes.left + 8 : (narrow ? 8 : 0);
    var rightGutter = narrow ? (lanes.right ? 8 + LANE * lanes.right + 8 : 8) : 0;
    var boxW = narrow ? W - leftGutter - rightGutter : Math.min(440, Math.floor((W - 160 - leftGutter) / 2));
    var chars = Math.floor((boxW - 2 * PAD - 14) / 7);
    var pos = {};
    var inBox = narrow ? drawn : null;
    function rows(line) { return wrap(line.t, chars - (line.dot ? 2 : line.swatch ? 3 : 0)); }
    function height(h) {
      return 2 * PAD + 20 + boxLines(model.sites[h], inBox).reduce(function (n, line) {
        return n + rows(line).length; }, 0) * LH;
    }
    var x0 = narrow ? leftGutter : 8 + leftGutter;
    var y = 28, yc, yp;
    if (narrow) {
      consumers.forEach(function (h) { pos[h] = { x: x0, y: y, w: boxW, h: height(h) }; y += pos[h].h + GAP; });
      y += 24;
      providers.forEach(function (h) { pos[h] = { x: x0, y: y, w: boxW, h: height(h) }; y += pos[h].h + GAP; });
      yc = y;
    } else {
      yc = 28; yp = 28;
      consumers.forEach(function (h) { pos[h] = { x: x0, y: yc, w: boxW, h: height(h) }; yc += pos[h].h + GAP; });
      providers.forEach(function (h) { pos[h] = { x: W - boxW - 8, y: yp, w: boxW, h: height(h) }; yp += pos[h].h + GAP; });
      yc = Math.max(yc, yp);
    }
    var H = yc + 8;
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img",
      "data-layout": narrow ? "narrow" : "wide",
      "aria-label": "Diagram of the VAN: consumers " + (narrow ? "above" : "on the left") +
        ", providers " + (narrow ? "below" : "on the right") + ", links between them; the same as text below" });
    el("title", {}, svg).textContent = "Skupper VAN diagram";
    text(svg, x0, 18, "Consumers", "small");
    var firstProvider = pos[providers[0]];
    text(svg, narrow ? x0 : W - boxW - 8, narrow ? (firstProvider ? firstProvider.y - 8 : 18) : 18, "Providers", "small");
    var links = el("g", { "class": "links" }, svg);
    drawn.forEach(function (l) {
      var a = pos[l.fromHost], b = pos[l.toHost];
      var d, lx, ly;
      var ay = a.y + 24, by = b.y + 24;
      if (l.side) {
        var right = l.side === "right";
        var gx = right ? W - 8 - LANE * l.lane : 8 + LANE * l.lane;
        var ax = right ? a.x + a.w : a.x, bx = right ? b.x + b.w : b.x;
        // each lane enters its boxes a little lower, so two lanes never share a stretch
        ay += 6 * l.lane; by += 6 * l.lane;
        d = "M" + ax + "," + ay + " L" + gx + "," + ay + " L" + gx + "," + by + " L" + bx + "," + by;
        lx = gx; ly = (ay + by) / 2;
      } else {
        var x1 = a.x + a.w, x2 = b.x;
        var mx = (x1 + x2) / 2;
        d = "M" + x1 + "," + ay + " C" + mx + "," + ay + " " + mx + "," + by + " " + x2 + "," + by;
        lx = mx; ly = (ay + by) / 2;
      }
      var why = l.state === "connected" ? "connected" :
        l.state === "unknown" ? "not known (the dialling site was not read)" :
        "not connected: " + l.status + (l.probe === false ? " (TCP probe to " + l.endpoint + " failed)" : "");
      var g = el("g", { "data-link": l.from + "->" + l.to, "data-state": l.state,
        "data-from-host": l.fromHost, "data-to-host": l.toHost, tabindex: 0,
        "aria-label": "link " + l.from + " to " + l.to + ": " + why }, links);
      el("title", {}, g).textContent = "link " + l.from + " \u2192 " + l.to + " (" + l.endpoint + "): " + why;
      el("path", { d: d, "class": "link " + l.state }, g);
      if (!l.side) {
        var label = l.state === "connected" ? "" : l.state === "unknown" ? "not read" :
          (l.probe === false ? "no TCP" : "not connected");
        if (label) text(g, lx - 30, ly - 6, label, "small", 18);
      }
    });
    model.order.forEach(function (h) {
      var s = model.sites[h], p = pos[h];
      var attrs = { "data-site": h, "data-state": s.state, "data-role": s.role,
        transform: "translate(" + p.x + "," + p.y + ")", tabindex: 0,
        "aria-label": h + " (" + s.role + "): " + STATE_LABEL[s.state] + (s.plan ? "; " + planLine(s.plan) : "") };
      if (s.plan) attrs["data-plan"] = planMark(s.plan);
      var g = el("g", attrs, svg);
      el("title", {}, g).textContent = h + " \u2014 " + [s.site, s.role, s.platform, STATE_LABEL[s.state]].filter(Boolean).join(", ") +
        (s.reason ? "\n" + s.reason : "") + (s.notes.length ? "\n" + s.notes.join("\n") : "");
      el("rect", { x: 0, y: 0, width: p.w, height: p.h, rx: 8, "class": "box s-" + s.state }, g);
      var pw = pillWidth(s.state);
      text(g, PAD, PAD + 15, h, "title", Math.max(4, Math.floor((p.w - pw - 3 * PAD) / 8)));
      pill(g, p.w - PAD - pw, PAD, s.state);
      var at = 0;
      boxLines(s, inBox).forEach(function (line) {
        var ly = PAD + 20 + (at + 1) * LH - 4;
        var row = g;
        if (line.listener) {
          row = el("g", { "data-listener": line.listener.port, "data-state": line.listener.state,
            "data-listener-site": h }, g);
          if (line.listener.ready) row.setAttribute("data-readiness", line.listener.ready.state);
          el("title", {}, row).textContent = listenerLine(line.listener) +
            (line.listener.detail ? ": " + line.listener.detail : "") +
            (line.listener.service ? " (" + line.listener.service + ")" : "") +
            (line.listener.ready ? "; model: " + line.listener.ready.reason : "");
        } else if (line.pool) {
          row = el("g", { "data-pool": line.pool.name, "data-port": line.pool.port,
            "data-state": line.pool.state, "data-preferred": line.pool.preferred }, g);
          el("title", {}, row).textContent = poolLine(line.pool) + (line.pool.detail ? ": " + line.pool.detail : "");
        } else if (line.backend) {
          row = el("g", { "data-pool-backend": line.of.name + "/" + line.backend.provider,
            "data-live": line.backend.live, "data-preferred": line.backend.preferred ? "true" : "false" }, g);
          el("title", {}, row).textContent = backendLine(line.backend).trim() +
            (line.backend.why ? ": " + line.backend.why : "");
        } else if (line.finding) {
          row = el("g", { "data-finding": str(line.finding.id), "data-severity": str(line.finding.severity) }, g);
          el("title", {}, row).textContent = str(line.finding.symptom) + "\ncause: " + str(line.finding.cause) +
            "\nfix: " + str(line.finding.fix);
        }
        if (line.swatch) {
          row = el("g", { "data-link-row": line.swatch.from + "->" + line.swatch.to,
            "data-state": line.swatch.state }, g);
          el("path", { d: "M" + PAD + "," + (ly - 4) + " L" + (PAD + 16) + "," + (ly - 4),
            "class": "link " + line.swatch.state }, row);
        }
        if (line.dot) el("circle", { cx: PAD + 5, cy: ly - 4, r: 4, "class": line.dot }, row);
        var indent = line.dot ? 14 : line.swatch ? 22 : 0;
        rows(line).forEach(function (segment, k) {
          text(row, PAD + indent, ly + k * LH, segment, line.cls || "");
        });
        at += rows(line).length;
      });
    });
    return svg;
  }

  // ---- the legend -----------------------------------------------------------------------
  function drawLegend(node) {
    node.textContent = "";
    html("h2", "Legend", node);
    function group(title) { html("h3", title, node); return html("ul", null, node); }
    function item(list, key, label, meaning, draw, width) {
      var li = html("li", null, list);
      li.setAttribute("data-legend", key);
      var svg = el("svg", { width: width || 14, height: 20, viewBox: "0 0 " + (width || 14) + " 20", "aria-hidden": "true" });
      draw(svg);
      li.appendChild(svg);
      if (label) html("span", label, li, "state");
      if (meaning) html("span", (label ? " \u2014 " : "") + meaning, li, "meaning");
    }
    var sites = group("Site state");
    STATES.forEach(function (state) {
      item(sites, "site-" + state, "", STATE_MEANING[state], function (svg) { pill(svg, 0, 0, state); },
        pillWidth(state));
    });
    var links = group("Links");
    LINK_STATES.forEach(function (pair) {
      item(links, "link-" + pair[0], pair[1], "", function (svg) {
        el("path", { d: "M1,10 L29,10", "class": "link " + pair[0] }, svg);
      }, 30);
    });
    var listeners = group("Listeners, findings and plans");
    LISTENER_STATES.forEach(function (state) {
      item(listeners, "listener-" + state, "listener " + state, "", function (svg) {
        el("circle", { cx: 6, cy: 10, r: 4, "class": state === "unknown" ? "f-listener-unknown" : "f-" + state }, svg);
      });
    });
    ["error", "warning", "info"].forEach(function (sev) {
      item(listeners, "finding-" + sev, "finding " + sev, "", function (svg) {
        el("circle", { cx: 6, cy: 10, r: 4, "class": "f-" + sev }, svg);
      });
    });
    [["would-change", "plan: would change"], ["would-refuse", "plan: would refuse"],
      ["no-change", "plan: no change"]].forEach(function (pair) {
      item(listeners, "plan-" + pair[0], pair[1], "", function (svg) {
        el("circle", { cx: 6, cy: 10, r: 4, "class": "f-" + pair[0] }, svg);
      });
    });
    [["serving", "pool serving"], ["degraded", "pool degraded"], ["down", "pool down"],
      ["live", "pool backend live"], ["not-live", "pool backend not live"]].forEach(function (pair) {
      item(listeners, "pool-" + pair[0], pair[1], "", function (svg) {
        el("circle", { cx: 6, cy: 10, r: 4, "class": POOL_DOT[pair[0]] }, svg);
      });
    });
    item(listeners, "pool-preferred", "\u2605 preferred", "the backend new connections go to", function () {});
  }

  // ---- the text alternative -------------------------------------------------------------
  function drawText(model, node, whereNow) {
    node.textContent = "";
    html("h2", "The VAN as text", node);
    if (whereNow.text) html("p", "Where the VAN is: " + whereNow.text, node);
    model.summaries.forEach(function (pair) { html("p", pair[0] + ": " + pair[1], node); });
    if (model.order.length) html("h2", "Sites", node);
    var ul = html("ul", null, node);
    model.order.forEach(function (h) {
      var s = model.sites[h];
      var li = html("li", null, ul);
      li.setAttribute("data-text-site", h);
      html("span", h, li, "state");
      li.appendChild(document.createTextNode(" (" + [s.site, s.role, s.platform].filter(Boolean).join(", ") + "): " +
        STATE_LABEL[s.state] + (s.from ? " (from " + s.from + ")" : "") + " \u2014 " +
        (s.reason || STATE_MEANING[s.state]) +
        (s.notes.length ? "; " + s.notes.join("; ") : "") +
        (s.drift && s.drift.length ? " \u2014 drift: " + s.drift.join("; ") : "") +
        (s.plan ? " \u2014 " + planLine(s.plan) + (s.plan.steps.length ? "; steps: " + s.plan.steps.join(", ") : "") : "") +
        (s.findings.length ? " \u2014 findings: " + s.findings.map(function (f) { return str(f.severity) + " " + str(f.id); }).join(", ") :
          s.diagnosed ? " \u2014 diagnose: no finding" : "")));
    });
    if (model.links.length) {
      html("h2", "Links", node);
      ul = html("ul", null, node);
      model.links.forEach(function (l) {
        html("li", l.from + " \u2192 " + l.to + " (" + l.endpoint + "): " +
          (l.state === "connected" ? "connected" : l.state === "unknown" ? "not known (the dialling site was not read)" :
            "not connected \u2014 " + l.status + (l.probe === false ? "; TCP probe failed" : "")), ul);
      });
    }
    var listeners = [];
    model.order.forEach(function (h) { model.sites[h].listeners.forEach(function (l) { listeners.push([h, l]); }); });
    if (listeners.length) {
      html("h2", "Listeners (model routes)", node);
      ul = html("ul", null, node);
      listeners.forEach(function (pair) {
        var l = pair[1];
        html("li", pair[0] + " " + listenerLine(l) + " (routing key " + l.key + ")" +
          (l.detail ? ": " + l.detail : "") + (l.ready ? "; model: " + l.ready.reason : ""), ul);
      });
    }
    var pools = [];
    model.order.forEach(function (h) { model.sites[h].pools.forEach(function (p) { pools.push([h, p]); }); });
    if (pools.length) {
      html("h2", "Model pools", node);
      ul = html("ul", null, node);
      pools.forEach(function (pair) {
        var p = pair[1];
        var li = html("li", pair[0] + " " + poolLine(p) + (p.detail ? ": " + p.detail : ""), ul);
        var sub = html("ul", null, li);
        p.backends.forEach(function (b) {
          html("li", backendLine(b).trim() + (b.why ? ": " + b.why : ""), sub);
        });
      });
    }
    html("h2", "Next model actions", node);
    if (!model.actions.length) html("p", "None.", node, "muted");
    else {
      ul = html("ol", null, node);
      model.actions.forEach(function (a) {
        html("li", "hosted-model-ctl " + str(a.action) + " " + str(a.profile) + " (on " + str(a.endpoint || a.host) + "): " + str(a.reason), ul);
      });
    }
    if (model.kinds.indexOf("diagnose") >= 0) {
      html("h2", "Diagnose findings", node);
      if (!model.findings.length) html("p", "No finding.", node, "muted");
      ul = html("ul", null, node);
      model.findings.forEach(function (f) {
        var li = html("li", null, ul);
        html("span", str(f.severity) + " at " + str(f.host) + ": " + str(f.id), li, "state");
        li.appendChild(document.createTextNode(" \u2014 " + str(f.symptom) + ". Cause: " + str(f.cause) + ". Fix: " + str(f.fix)));
        var next = arr(f.next).map(function (n) { return str(n && n.text); }).filter(Boolean);
        if (next.length) li.appendChild(document.createTextNode(" Next: " + next.join("; then ")));
        var evidence = arr(f.evidence);
        if (evidence.length) {
          var ev = html("ul", null, li);
          evidence.forEach(function (line) { html("li", "evidence (from the host, untrusted): " + str(line), ev, "muted"); });
        }
      });
    }
    if (model.checks) {
      if (model.checks.topology) { html("h2", "Topology", node); html("pre", model.checks.topology, node); }
      html("h2", "Precheck", node);
      ul = html("ul", null, node);
      arr(model.checks.checks).forEach(function (c) {
        html("li", str(c.status) + " " + str(c.name) + " at " + str(c.site) + ": " + str(c.detail) + (c.hint ? " (hint: " + str(c.hint) + ")" : ""), ul);
      });
    }
  }

  // ---- the lifecycle strip --------------------------------------------------------------
  function drawLifecycle(model, whereNow) {
    var ol = document.getElementById("lifecycle");
    ol.textContent = "";
    var next = model.plan ? str(model.plan.operation) : null;
    LIFECYCLE.forEach(function (stage) {
      var li = html("li", stage, ol);
      li.setAttribute("data-stage", stage);
      if (stage === whereNow.stage) { li.className = "now"; li.setAttribute("aria-current", "step"); }
      if (stage === next) { li.className += " next"; li.textContent = stage + " (planned)"; }
    });
    document.getElementById("where").textContent = whereNow.text ? "Now: " + whereNow.text + "." : "";
    var plan = document.getElementById("plan");
    plan.textContent = "";
    plan.removeAttribute("data-plan");
    if (model.plan) {
      var planned = model.order.filter(function (h) { return model.sites[h].plan; });
      var marked = function (mark) {
        return planned.filter(function (h) { return planMark(model.sites[h].plan) === mark; });
      };
      var what = marked("would-change").map(function (h) {
        var p = model.sites[h].plan, steps = p.steps.length;
        return h + " \u2192 " + p.outcome + (steps ? " (" + steps + (steps === 1 ? " step" : " steps") + ")" : "");
      }).join(", ");
      var refused = marked("would-refuse").map(function (h) {
        var p = model.sites[h].plan;
        return h + " (" + p.outcome + (p.reason ? ": " + p.reason : "") + ")";
      }).join(", ");
      var same = marked("no-change");
      plan.textContent = next + " (plan) " +
        (what ? "would change " + what : "would change nothing") +
        (refused ? "; would refuse at " + refused : "") +
        (same.length ? "; no change at " + same.join(", ") : "") + ".";
      plan.setAttribute("data-plan", next);
    }
  }

  // ---- render everything ----------------------------------------------------------------
  var lastModel = null;
  function render() {
    var model = build();
    lastModel = model;
    var has = model.order.length > 0 || model.checks;
    document.getElementById("empty").hidden = !!has;
    document.getElementById("view").hidden = !has;
    if (!has) return;
    var whereNow = where(model);
    drawLifecycle(model, whereNow);
    var diagram = document.getElementById("diagram");
    diagram.textContent = "";
    var width = diagram.clientWidth || document.documentElement.clientWidth || 800;
    if (model.order.length) diagram.appendChild(drawDiagram(model, width));
    drawLegend(document.getElementById("legend"));
    drawText(model, document.getElementById("van-text"), whereNow);
  }

  var resizeTimer = null;
  window.addEventListener("resize", function () {
    if (resizeTimer) clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () { if (lastModel) render(); }, 100);
  });

  function show(message) { document.getElementById("message").textContent = str(message); }

  // ---- the MCP App side (io.modelcontextprotocol/ui) ------------------------------------
  // The official App class of @modelcontextprotocol/ext-apps speaks the protocol (spec
  // 2026-01-26: ui/initialize, tool-input, tool-result, host-context-changed, size changes,
  // teardown, ping). What the view adds: its transport posts to the host's origin only, it
  // follows the host's theme, offers Refresh only to a host that proxies server tools (and
  // refreshes through the app-only view_refresh tool), and Fullscreen only where offered.
  var REFRESH_TOOL = "view_refresh";
  var inHost = window.parent && window.parent !== window;

  // The origin of the window that embeds the view (the host, or its sandbox proxy); null when
  // it cannot be told (an opaque origin), and then the view posts nothing at all.
  function hostOrigin() {
    var origin = null;
    try {
      var ancestors = window.location.ancestorOrigins;
      if (ancestors && ancestors.length) origin = ancestors[0];
      else if (document.referrer) origin = new URL(document.referrer).origin;
    } catch (e) { origin = null; }
    return origin && origin !== "null" ? origin : null;
  }

  // A Transport (the MCP SDK's interface) over postMessage to one origin: unlike the SDK's
  // PostMessageTransport, which posts with target origin "*", a message can reach no other
  // document than the host's; and only the parent's messages, from that origin, are read.
  function HostTransport(origin) {
    var self = this;
    this.origin = origin;
    this.listener = function (event) {
      if (event.source !== window.parent || event.origin !== origin) return;
      var m = event.data;
      if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
      if (self.onmessage) self.onmessage(m);
    };
  }
  HostTransport.prototype.start = function () {
    window.addEventListener("message", this.listener);
    return Promise.resolve();
  };
  HostTransport.prototype.send = function (message) {
    window.parent.postMessage(message, this.origin);
    return Promise.resolve();
  };
  HostTransport.prototype.close = function () {
    window.removeEventListener("message", this.listener);
    if (this.onclose) this.onclose();
    return Promise.resolve();
  };

  function toolResult(params) {
    if (!params || typeof params !== "object") return;
    if (params.isError) {
      var content = arr(params.content).filter(function (c) { return c && c.type === "text"; });
      show("The tool failed: " + (content.length ? str(content[0].text) : "no detail"));
      return;
    }
    if (addResult(params.structuredContent)) { show(""); render(); }
    else show("This result has nothing to draw.");
  }

  var refresh = document.getElementById("refresh");
  var fullscreen = document.getElementById("fullscreen");
  var app = null;

  // the host's theme and display mode (initialize result, then host-context-changed)
  function followHost(context) {
    if (!context) return;
    if (context.theme === "dark" || context.theme === "light") applyDocumentTheme(context.theme);
    var modes = arr(context.availableDisplayModes);
    if (context.displayMode) document.documentElement.setAttribute("data-display-mode", str(context.displayMode));
    var mode = document.documentElement.getAttribute("data-display-mode") || "inline";
    fullscreen.hidden = !(modes.indexOf("fullscreen") >= 0 && modes.indexOf("inline") >= 0);
    fullscreen.textContent = mode === "fullscreen" ? "Exit full screen" : "Full screen";
  }

  refresh.addEventListener("click", function () {
    if (!app) return;
    refresh.disabled = true;
    show("Reading the status\u2026");
    app.callServerTool({ name: REFRESH_TOOL, arguments: {} }).then(function (result) {
      refresh.disabled = false;
      toolResult(result);
    }, function (error) {
      refresh.disabled = false;
      show("Refresh failed: " + str(error && error.message));
    });
  });

  fullscreen.addEventListener("click", function () {
    if (!app) return;
    var now = document.documentElement.getAttribute("data-display-mode") || "inline";
    app.requestDisplayMode({ mode: now === "fullscreen" ? "inline" : "fullscreen" }).then(function (result) {
      followHost({ displayMode: result && result.mode, availableDisplayModes: arr((app.getHostContext() || {}).availableDisplayModes) });
    }, function (error) {
      show("The host did not change the display mode: " + str(error && error.message));
    });
  });

  // results embedded by page_html (outside an agent): a JSON object {kind: result}
  var embedded = null;
  try { embedded = JSON.parse(document.getElementById("van-data").textContent || "null"); }
  catch (e) { embedded = null; }
  if (embedded && typeof embedded === "object") {
    Object.keys(embedded).forEach(function (key) { addResult(embedded[key]); });
  }
  render();

  if (inHost) {
    var origin = hostOrigin();
    if (!origin) {
      show("The view cannot tell its host's origin, so it sends the host nothing.");
    } else {
      document.getElementById("empty").textContent = "Waiting for the tool's result\u2026";
      app = new App({ name: "skupper-mcp VAN view", version: "2" }, {});
      app.ontoolresult = toolResult;
      app.ontoolcancelled = function (params) {
        show("The call was cancelled" + (params && params.reason ? ": " + str(params.reason) : "") + ".");
      };
      app.ontoolinput = function (params) {
        var args = params && params.arguments ? params.arguments : {};
        var shown = Object.keys(args).map(function (k) { return k + "=" + JSON.stringify(args[k]); }).join(" ");
        show("Waiting for the result" + (shown ? " (" + shown + ")" : "") + "\u2026");
      };
      app.onhostcontextchanged = function (context) {
        var known = app.getHostContext() || {};
        followHost(Object.assign({ availableDisplayModes: known.availableDisplayModes }, context));
      };
      app.onteardown = function () { return {}; };
      app.connect(new HostTransport(origin)).then(function () {
        var capabilities = app.getHostCapabilities() || {};
        refresh.hidden = !capabilities.serverTools;
        followHost(app.getHostContext());
      }, function (error) {
        show("The host refused the app: " + str(error && error.message));
      });
    }
  }
  window.skupperVan = { render: render, add: function (r) { addResult(r); render(); } };
})();
