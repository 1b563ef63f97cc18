"""The browser view's page: one HTML document with its own small script and style inline (nothing fetched from
elsewhere: the machines it runs on often reach nothing but loopback), and the Content-Security-Policy that allows
exactly those.

The page shows the newest frame on a canvas (views: rgb / depth / label / all), the step and episode counters, the
env's steps per second, the frames per second it draws, and a chart of episode returns drawn on a second canvas. It
talks to the server over one WebSocket (``/ws``): JSON text messages carry counters and returns, binary messages
carry JPEG frames; all the page ever sends is which view it shows. State for tests: ``#frame`` has ``data-frames``
(frames drawn), ``data-step`` (the step of the frame shown), ``data-view`` and ``data-scale``; ``#returns`` has
``data-points``.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root { color-scheme: dark; --bg: #15171c; --panel: #1e2129; --fg: #e6e6e6; --dim: #9aa0aa; --accent: #4fa3ff; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.4 system-ui, sans-serif; }
header { display: flex; align-items: baseline; gap: 1em; padding: 10px 16px; background: var(--panel); }
h1 { font-size: 17px; margin: 0; font-weight: 600; }
h2 { font-size: 14px; margin: 14px 0 6px; font-weight: 600; }
#status { font-size: 12px; padding: 1px 8px; border-radius: 9px; }
#status.on { background: #1f6f3a; } #status.off { background: #7a3b12; }
#envs { color: var(--dim); }
#views { display: flex; gap: 6px; padding: 10px 16px 0; }
#views button { background: var(--panel); color: var(--fg); border: 1px solid #3a3f4b; border-radius: 6px;
  padding: 4px 12px; font: inherit; cursor: pointer; }
#views button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: #fff; }
main { display: flex; flex-wrap: wrap; gap: 16px; padding: 10px 16px; align-items: flex-start; }
#stage { flex: 1 1 520px; min-width: 260px; }
#frame { display: block; image-rendering: pixelated; background: #000; max-width: 100%; }
aside { flex: 0 0 440px; max-width: 100%; background: var(--panel); border-radius: 8px; padding: 10px 14px; }
dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 14px; margin: 0; }
dt { color: var(--dim); } dd { margin: 0; font-variant-numeric: tabular-nums; }
#returns { width: 100%; height: 220px; display: block; background: #111318; border-radius: 4px; }
#last-return { color: var(--dim); font-size: 12px; margin: 4px 0 0; }
footer { color: var(--dim); font-size: 12px; padding: 6px 16px 14px; }
"""

SCRIPT = r"""
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const token = params.get("token");
  const frame = $("frame");
  const ctx = frame.getContext("2d");
  const chart = $("returns");
  const LABELS = { rgb: "RGB", depth: "Depth", label: "Labels", all: "All" };
  const MAX_POINTS = 100000;
  const st = { view: params.get("view"), returns: [], returnsFrom: 0, frames: 0, times: [], retry: 1000,
               decoded: 0, drawn: 0, step: 0, counters: null, countersShown: -1e9 };
  let ws = null;

  function status(text, live) {
    const s = $("status");
    s.textContent = text;
    s.className = live ? "on" : "off";
  }

  function fit() {
    const avail = $("stage").clientWidth || frame.width;
    let scale = Math.floor(avail / frame.width);
    scale = scale >= 1 ? Math.min(scale, 6) : avail / frame.width;
    frame.style.width = Math.round(frame.width * scale) + "px";
    frame.style.height = Math.round(frame.height * scale) + "px";
    frame.dataset.scale = String(scale);
  }

  function choose(view) {
    st.view = view;
    frame.dataset.view = view;
    for (const b of $("views").children) b.setAttribute("aria-pressed", String(b.dataset.view === view));
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ view }));
  }

  function onHello(m) {
    document.title = "pixelrig: " + m.title;
    $("title").textContent = m.title;
    $("envs").textContent = m.num_envs > 1 ? m.num_envs + " envs" : "";
    const box = $("views");
    box.textContent = "";
    for (const v of m.views) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = LABELS[v] || v;
      b.dataset.view = v;
      b.addEventListener("click", () => choose(v));
      box.appendChild(b);
    }
    st.returns = [];
    st.returnsFrom = 0;
    choose(m.views.includes(st.view) ? st.view : m.view);
  }

  function showCounters() {
    const m = st.counters;
    st.countersShown = performance.now();
    if (!m) return;
    $("step").textContent = m.steps.toLocaleString("en");
    $("episodes").textContent = m.episodes.toLocaleString("en");
    $("sps").textContent = m.steps_per_s.toFixed(1);
    $("viewers").textContent = String(m.viewers);
  }

  function onStats(m) {
    st.step = m.frame_step;
    st.counters = m;
    // text is redrawn at most 4 times a second (each change costs the browser a layout and a paint)
    if (performance.now() - st.countersShown > 250 || m.returns.length) showCounters();
    if (m.returns.length) {
      const at = m.returns_from - st.returnsFrom;
      if (at < 0 || at > st.returns.length) {
        st.returns = [];
        st.returnsFrom = m.returns_from;
      } else {
        st.returns.length = at;
      }
      for (const r of m.returns) st.returns.push(r);
      if (st.returns.length > MAX_POINTS) {
        const drop = st.returns.length - MAX_POINTS;
        st.returns.splice(0, drop);
        st.returnsFrom += drop;
      }
      const last = st.returns[st.returns.length - 1];
      $("last-return").textContent = "last: " + (last === null ? "n/a" : last.toPrecision(4)) + " (episode " +
        (st.returnsFrom + st.returns.length) + ")";
      drawChart();
    }
  }

  async function onFrame(blob, step) {
    const seq = ++st.decoded;
    let bmp;
    try {
      bmp = await createImageBitmap(blob);
    } catch (e) {
      return;
    }
    if (seq < st.drawn) {
      bmp.close();
      return;
    }
    st.drawn = seq;
    if (frame.width !== bmp.width || frame.height !== bmp.height) {
      frame.width = bmp.width;
      frame.height = bmp.height;
      fit();
    }
    ctx.drawImage(bmp, 0, 0);
    bmp.close();
    st.frames += 1;
    frame.dataset.frames = String(st.frames);
    frame.dataset.step = String(step);
    const now = performance.now();
    st.times.push(now);
    while (st.times.length > 2 && now - st.times[0] > 3000) st.times.shift();
  }

  function showRate() {
    const t = st.times;
    const now = performance.now();
    if (t.length < 2 || now - t[t.length - 1] > 3000) {
      $("fps").textContent = "0.0";
      return;
    }
    $("fps").textContent = ((t.length - 1) / ((t[t.length - 1] - t[0]) / 1000)).toFixed(1);
  }

  function drawChart() {
    const dpr = window.devicePixelRatio || 1;
    const w = chart.clientWidth, h = chart.clientHeight;
    if (chart.width !== Math.round(w * dpr) || chart.height !== Math.round(h * dpr)) {
      chart.width = Math.round(w * dpr);
      chart.height = Math.round(h * dpr);
    }
    const g = chart.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = "11px system-ui, sans-serif";
    const data = st.returns;
    const finite = data.filter((r) => r !== null);
    chart.dataset.points = String(finite.length);
    if (!finite.length) {
      g.fillStyle = "#9aa0aa";
      g.fillText("no episode has ended yet", 12, h / 2);
      return;
    }
    const L = 52, R = 10, T = 10, B = 22, pw = w - L - R, ph = h - T - B;
    let lo = Math.min(...finite.slice(-50000)), hi = Math.max(...finite.slice(-50000));
    if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
    const pad = (hi - lo) * 0.06;
    lo -= pad; hi += pad;
    const n = data.length;
    const x = (i) => L + (n === 1 ? pw / 2 : (i / (n - 1)) * pw);
    const y = (v) => T + (1 - (v - lo) / (hi - lo)) * ph;
    g.strokeStyle = "#3a3f4b";
    g.lineWidth = 1;
    g.strokeRect(L + 0.5, T + 0.5, pw, ph);
    if (lo < 0 && hi > 0) {
      g.beginPath(); g.moveTo(L, y(0)); g.lineTo(L + pw, y(0)); g.stroke();
    }
    g.fillStyle = "#9aa0aa";
    g.textAlign = "right";
    g.fillText(hi.toPrecision(3), L - 4, T + 9);
    g.fillText(lo.toPrecision(3), L - 4, T + ph);
    g.textAlign = "left";
    g.fillText("episode " + (st.returnsFrom + 1), L, h - 6);
    g.textAlign = "right";
    g.fillText(String(st.returnsFrom + n), L + pw, h - 6);
    const line = (values, colour, width) => {
      g.strokeStyle = colour;
      g.lineWidth = width;
      g.beginPath();
      let pen = false;
      const stride = Math.max(1, Math.floor(n / (pw * 2)));
      for (let i = 0; i < n; i += stride) {
        const v = values[i];
        if (v === null) { pen = false; continue; }
        if (pen) g.lineTo(x(i), y(v)); else g.moveTo(x(i), y(v));
        pen = true;
      }
      g.stroke();
    };
    line(data, "#4fa3ff", 1);
    if (n === 1 || n < pw / 6) {
      g.fillStyle = "#4fa3ff";
      data.forEach((v, i) => { if (v !== null) g.fillRect(x(i) - 1.5, y(v) - 1.5, 3, 3); });
    }
    if (n >= 10) {
      const k = Math.max(2, Math.min(100, Math.round(n / 20)));
      const avg = [];
      let sum = 0, cnt = 0;
      for (let i = 0; i < n; i++) {
        if (data[i] !== null) { sum += data[i]; cnt += 1; }
        if (i >= k && data[i - k] !== null) { sum -= data[i - k]; cnt -= 1; }
        avg.push(cnt ? sum / cnt : null);
      }
      line(avg, "#ffb347", 2);
    }
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    ws = new WebSocket(scheme + location.host + "/ws" + (token ? "?token=" + encodeURIComponent(token) : ""));
    ws.binaryType = "blob";
    ws.onopen = () => { st.retry = 1000; status("live", true); };
    ws.onmessage = (ev) => {
      if (typeof ev.data === "string") {
        const m = JSON.parse(ev.data);
        if (m.type === "hello") onHello(m);
        else if (m.type === "stats") onStats(m);
      } else {
        onFrame(ev.data, st.step);
      }
    };
    ws.onclose = () => {
      status("disconnected: retrying", false);
      setTimeout(connect, st.retry);
      st.retry = Math.min(st.retry * 2, 10000);
    };
  }

  window.addEventListener("resize", () => { fit(); drawChart(); });
  setInterval(() => { showRate(); showCounters(); }, 500);
  drawChart();
  connect();
})();
"""

BODY = """
<header><h1 id="title">pixelrig</h1><span id="envs"></span><span id="status" class="off">connecting</span></header>
<nav id="views" aria-label="view"></nav>
<main>
  <section id="stage"><canvas id="frame" width="1" height="1" data-frames="0" data-step="0"></canvas></section>
  <aside>
    <dl>
      <dt>env steps</dt><dd id="step">-</dd>
      <dt>episodes done</dt><dd id="episodes">-</dd>
      <dt>env steps/s</dt><dd id="sps">-</dd>
      <dt>frames/s shown</dt><dd id="fps">-</dd>
      <dt>viewers</dt><dd id="viewers">-</dd>
    </dl>
    <h2>Episode returns</h2>
    <canvas id="returns" data-points="0"></canvas>
    <p id="last-return"></p>
  </aside>
</main>
<footer>pixelrig browser view: read-only, nothing on this page changes the simulation.</footer>
"""

INDEX_HTML = (
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>pixelrig</title>\n'
    '<link rel="icon" href="data:,">\n'
    f"<style>{STYLE}</style>\n</head>\n<body>{BODY}<script>{SCRIPT}</script>\n</body>\n</html>\n"
)


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


CSP = (f"default-src 'none'; script-src {_sha256(SCRIPT)}; style-src {_sha256(STYLE)}; img-src data: blob:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""Only the inline script and style above run; the page connects to its own origin only."""
