// The dashboard: reads /dashboard.json every few seconds and draws it. The token, when the
// server asks for one, stays in this tab's sessionStorage and goes only in the Authorization header.
"use strict";
(function () {
  const REFRESH_MS = 3000;
  const TOKEN_KEY = "execache.token";
  const SVG = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);
  // each period plots one of the server's series over a window of time that ends now
  const PERIODS = {
    "show-minutes": { series: "lastHour", span: 600, ticks: ["-10 min", "-5 min"] },
    "show-hour": { series: "lastHour", span: 3600, ticks: ["-60 min", "-30 min"] },
    "show-day": { series: "lastDay", span: 86400, ticks: ["-24 h", "-12 h"] },
  };
  let period = PERIODS["show-minutes"];
  const order = { tools: "calls", agents: "calls" };
  let latest = null;
  let timer = null;
  // the server's clock, so that a browser whose clock is off still plots the last hour
  let nowMs = 0;

  function tokenAsked() {
    return document.body.dataset.tokenAsked === "true";
  }

  function storedToken() {
    try { return sessionStorage.getItem(TOKEN_KEY); } catch (e) { return null; }
  }

  function askForToken(refused) {
    $("figures").hidden = true;
    $("token-form").hidden = false;
    $("token-refused").hidden = !refused;
    setState("a token is needed", "bad");
    $("token").focus();
  }

  async function refresh() {
    clearTimeout(timer);
    const token = storedToken();
    if (tokenAsked() && !token) {
      askForToken(false);
      return;
    }
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    try {
      const answer = await fetch("dashboard.json", { headers, cache: "no-store", credentials: "omit" });
      if (answer.status === 401) {
        try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* nothing kept */ }
        askForToken(true);
        return;
      }
      const body = await answer.json();
      if (!answer.ok) {
        setState(body.error || "the figures could not be read", "bad");
      } else {
        latest = body;
        show(body);
      }
    } catch (e) {
      setState("cannot reach the server; trying again", "bad");
    }
    timer = setTimeout(refresh, REFRESH_MS);
  }

  function setState(text, kind) {
    const state = $("state");
    state.textContent = text;
    state.className = "state " + (kind || "");
  }

  // --- numbers as a person reads them

  function integer(n) {
    return Math.round(n).toLocaleString("en-US");
  }

  function percent(rate, lookups) {
    return lookups === 0 ? "–" : (rate * 100).toFixed(rate >= 0.995 || rate === 0 ? 0 : 1) + "%";
  }

  function rate(perSecond) {
    if (perSecond === 0) return "0/s";
    return (perSecond < 10 ? perSecond.toFixed(perSecond < 1 ? 2 : 1) : integer(perSecond)) + "/s";
  }

  function duration(ms) {
    if (ms === 0) return "0 s";
    if (ms < 1) return "<1 ms";
    if (ms < 1000) return Math.round(ms) + " ms";
    const s = ms / 1000;
    if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + " min " + Math.round(s % 60) + " s";
    const h = Math.floor(m / 60);
    if (h < 48) return h + " h " + (m % 60) + " min";
    return Math.floor(h / 24) + " d " + (h % 24) + " h";
  }

  function bytes(n) {
    const units = ["B", "KB", "MB", "GB", "TB"];
    let value = n;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return (unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)) + " " + units[unit];
  }

  function compact(n) {
    if (n < 1000) return String(Math.round(n));
    if (n < 1e6) return (n / 1e3).toFixed(n < 1e4 ? 1 : 0) + " k";
    if (n < 1e9) return (n / 1e6).toFixed(n < 1e7 ? 1 : 0) + " M";
    return (n / 1e9).toFixed(1) + " G";
  }

  function set(id, text) {
    $(id).textContent = text;
  }

  // --- the page

  function show(data) {
    $("token-form").hidden = true;
    $("figures").hidden = false;
    $("forget-token").hidden = !storedToken();
    const t = data.totals;
    const store = data.store;
    set("store", store.store + " · " + store.location);
    set("version", "execache " + data.version);
    const time = new Date(data.at).toLocaleTimeString();
    if (data.health.outage) {
      setState("store outage · " + time, "bad");
    } else {
      setState("healthy · updated " + time, "good");
    }

    const lookups = t.hits + t.misses;
    set("hit-rate", percent(t.hitRate, lookups));
    const recent = data.recent;
    set("recent-hit-rate", percent(recent.hitRate, recent.hits + recent.misses));
    set("saved", duration(t.totalSavedMs));
    set("recent-saved", duration(recent.savedMs));
    set("saved-per-hit", duration(t.averageSavedMs));

    if (data.keptOut.bytes === null) {
      set("kept-out", "–");
      set("kept-out-tokens", "not counted by this server");
    } else {
      set("kept-out", bytes(data.keptOut.bytes));
      set("kept-out-tokens", "≈ " + compact(data.keptOut.estimatedTokens) + " tokens (bytes / "
        + data.keptOut.bytesPerToken + ")");
    }

    for (const kind of ["hits", "misses", "shared", "failed"]) {
      set("total-" + kind, integer(t[kind]));
      set("rate-" + kind, rate(data.perSecond[kind]));
    }
    // stale runs answered without running, and the time that saved (apart from the hits')
    set("total-revalidated", integer(t.revalidated));
    set("revalidation-saved", "saved " + duration(t.revalidationSavedMs));

    const limits = store.limits;
    set("entries", integer(t.entries));
    fill("entries-bar", t.entries, limits.maxEntries);
    set("entries-bound", "of at most " + integer(limits.maxEntries) + " · "
      + percent(limits.maxEntries ? t.entries / limits.maxEntries : 0, 1) + " full");
    set("bytes", bytes(t.estimatedBytes));
    if (limits.maxBytes === null) {
      fill("bytes-bar", 0, 0);
      set("bytes-bound", "estimated · no byte bound");
    } else {
      fill("bytes-bar", t.estimatedBytes, limits.maxBytes);
      set("bytes-bound", "of at most " + bytes(limits.maxBytes));
    }

    const h = data.health;
    set("health-state", h.outage ? "outage: runs go on uncached" : "answering");
    $("health-state").className = h.outage ? "bad" : "";
    set("health-errors", integer(h.storeErrors));
    $("health-errors").className = h.storeErrors > 0 ? "bad" : "";
    set("health-damaged", integer(h.damaged));
    $("health-damaged").className = h.damaged > 0 ? "bad" : "";
    set("health-evictions", integer(h.evictions));
    set("health-expirations", integer(h.expirations));
    set("health-invalidations", integer(h.invalidations) + (h.removalsByCause ? " (" + ["write", "version", "resource", "hand"]
      .map((cause) => cause + " " + integer(h.removalsByCause[cause] || 0)).join(", ") + ")" : ""));
    set("health-since", t.countingSince ? new Date(t.countingSince).toLocaleString() : "unknown");
    $("health-says").hidden = !h.says;
    set("health-says", h.says || "");

    table("tools", data.tools);
    table("agents", data.agents);
    servers(data.servers || []);
    charts(data);
  }

  // each downstream server: up, starting, or unavailable with the reason (the command and the system's error)
  function servers(rows) {
    $("servers-card").hidden = rows.length === 0;
    $("servers").tBodies[0].replaceChildren(...rows.map((row) => {
      const tr = document.createElement("tr");
      const state = row.state === "unavailable" ? "unavailable: " + row.reason : row.state;
      for (const text of [row.name, state, integer(row.tools)]) {
        const td = document.createElement("td");
        td.textContent = text;
        tr.appendChild(td);
      }
      tr.children[1].className = row.state === "unavailable" ? "bad" : "";
      return tr;
    }));
  }

  function fill(id, value, bound) {
    const share = bound > 0 ? Math.min(1, value / bound) : 0;
    const bar = $(id);
    bar.style.width = (share * 100).toFixed(1) + "%";
    bar.className = share >= 0.9 ? "full" : "";
  }

  function table(id, rows) {
    const body = $(id).tBodies[0];
    const key = order[id];
    const sorted = rows.slice().sort((a, b) => b[key] - a[key] || a.name.localeCompare(b.name)).slice(0, 10);
    const most = sorted.reduce((max, row) => Math.max(max, row[key]), 0);
    body.replaceChildren(...sorted.map((row) => {
      const tr = document.createElement("tr");
      const name = document.createElement("td");
      name.textContent = row.name;
      const bar = document.createElement("div");
      bar.className = "bar";
      const span = document.createElement("span");
      span.style.width = (most > 0 ? (row[key] / most) * 100 : 0).toFixed(1) + "%";
      bar.appendChild(span);
      name.appendChild(bar);
      tr.appendChild(name);
      for (const text of [integer(row.calls), percent(row.hitRate, row.hits + row.misses), duration(row.savedMs)]) {
        const td = document.createElement("td");
        td.textContent = text;
        tr.appendChild(td);
      }
      return tr;
    }));
    $(id + "-empty").hidden = rows.length > 0;
    $(id).hidden = rows.length === 0;
  }

  // --- charts: inline SVG, drawn from the series of the period shown

  function el(name, attributes, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    if (parent) parent.appendChild(node);
    return node;
  }

  function frame(svg) {
    const width = Math.max(200, svg.clientWidth || 600);
    const height = Math.max(100, svg.clientHeight || 150);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.replaceChildren();
    return { width, height, left: 52, right: 8, top: 8, bottom: 20 };
  }

  function axes(svg, f, series, top, label) {
    for (const share of [0, 0.5, 1]) {
      const y = f.top + (1 - share) * (f.height - f.top - f.bottom);
      el("line", { x1: f.left, x2: f.width - f.right, y1: y, y2: y, class: "grid" }, svg);
      el("text", { x: f.left - 6, y: y + 4, "text-anchor": "end" }, svg).textContent = label(top * share);
    }
    const span = period.span;
    const ticks = [[span, period.ticks[0]], [span / 2, period.ticks[1]], [0, "now"]];
    for (const [ago, text] of ticks) {
      const x = xOf(f, series, nowMs - ago * 1000);
      el("text", { x, y: f.height - 4, "text-anchor": ago === 0 ? "end" : ago === span ? "start" : "middle" }, svg)
        .textContent = text;
    }
  }

  function xOf(f, series, time) {
    const span = period.span * 1000;
    const start = nowMs - span;
    return f.left + ((time - start) / span) * (f.width - f.left - f.right);
  }

  function points(series) {
    const all = series.points.filter((p) => p.start >= nowMs - period.span * 1000);
    if (series.current && series.current.seconds > 0) all.push(series.current);
    return all;
  }

  function barWidth(f, series, point) {
    return Math.max(1.5, (point.seconds / period.span) * (f.width - f.left - f.right) - 0.5);
  }

  function charts(data) {
    nowMs = Date.parse(data.at);
    const series = data.series[period.series];
    const all = points(series);
    const seconds = (p) => Math.max(p.seconds, 1);

    // hit rate: a line through the steps that looked anything up
    const hitSvg = $("chart-hit-rate");
    let f = frame(hitSvg);
    axes(hitSvg, f, series, 1, (v) => Math.round(v * 100) + "%");
    const yRate = (r) => f.top + (1 - r) * (f.height - f.top - f.bottom);
    const looked = all.filter((p) => p.hits + p.misses > 0)
      .map((p) => [xOf(f, series, p.start + p.seconds * 1000), yRate(p.hits / (p.hits + p.misses))]);
    if (looked.length > 1) {
      const path = looked.map(([x, y], i) => (i ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1)).join(" ");
      el("path", { d: path + " L" + looked[looked.length - 1][0].toFixed(1) + " " + yRate(0) + " L"
        + looked[0][0].toFixed(1) + " " + yRate(0) + " Z", class: "area" }, hitSvg);
      el("path", { d: path, class: "line" }, hitSvg);
    }
    for (const [x, y] of looked.slice(-60)) el("circle", { cx: x, cy: y, r: 2.5, class: "dot" }, hitSvg);

    // calls per second: stacked bars
    const callSvg = $("chart-calls");
    f = frame(callSvg);
    const kinds = ["hits", "misses", "shared", "failed"];
    const most = all.reduce((max, p) => Math.max(max, kinds.reduce((sum, k) => sum + p[k], 0) / seconds(p)), 0);
    const top = niceTop(most);
    axes(callSvg, f, series, top, (v) => (v < 10 && v > 0 ? v.toFixed(1) : Math.round(v)) + "/s");
    const plotHeight = f.height - f.top - f.bottom;
    for (const p of all) {
      const width = barWidth(f, series, p);
      const x = xOf(f, series, p.start + p.seconds * 1000) - width;
      let y = f.top + plotHeight;
      for (const kind of kinds) {
        const h = (p[kind] / seconds(p) / top) * plotHeight;
        if (h > 0) {
          y -= h;
          el("rect", { x: x.toFixed(1), y: y.toFixed(1), width: width.toFixed(1), height: h.toFixed(1), class: kind }, callSvg);
        }
      }
    }

    // time saved in each step
    const savedSvg = $("chart-saved");
    f = frame(savedSvg);
    const mostSaved = niceTop(all.reduce((max, p) => Math.max(max, p.savedMs), 0));
    set("saved-unit", "(per " + (series.stepSeconds >= 60 ? series.stepSeconds / 60 + " min" : series.stepSeconds + " s")
      + ")");
    axes(savedSvg, f, series, mostSaved, (v) => duration(v));
    for (const p of all) {
      const width = barWidth(f, series, p);
      const x = xOf(f, series, p.start + p.seconds * 1000) - width;
      const h = (p.savedMs / mostSaved) * plotHeight;
      if (h > 0) {
        el("rect", { x: x.toFixed(1), y: (f.top + plotHeight - h).toFixed(1), width: width.toFixed(1),
          height: h.toFixed(1), class: "saved" }, savedSvg);
      }
    }
  }

  function niceTop(value) {
    if (value <= 0) return 1;
    const power = Math.pow(10, Math.floor(Math.log10(value)));
    for (const step of [1, 2, 5, 10]) {
      if (value <= step * power) return step * power;
    }
    return 10 * power;
  }

  // --- controls

  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("token").value.trim();
    if (!token) return;
    try { sessionStorage.setItem(TOKEN_KEY, token); } catch (e) { /* private mode: asked again next time */ }
    $("token").value = "";
    refresh();
  });

  $("forget-token").addEventListener("click", () => {
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* nothing kept */ }
    clearTimeout(timer);
    askForToken(false);
  });

  for (const id of Object.keys(PERIODS)) {
    $(id).addEventListener("click", () => {
      period = PERIODS[id];
      for (const other of Object.keys(PERIODS)) $(other).setAttribute("aria-pressed", String(other === id));
      if (latest) charts(latest);
    });
  }

  for (const button of document.querySelectorAll("button[data-order]")) {
    button.addEventListener("click", () => {
      order[button.dataset.table] = button.dataset.order;
      for (const other of document.querySelectorAll("button[data-table='" + button.dataset.table + "']")) {
        other.setAttribute("aria-pressed", String(other === button));
      }
      if (latest) table(button.dataset.table, latest[button.dataset.table]);
    });
  }

  let resizing = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => { if (latest) charts(latest); }, 150);
  });

  refresh();
})();
