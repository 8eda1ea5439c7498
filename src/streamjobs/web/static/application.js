// The application page: tabs kept in the URL hash, Abort app, and refreshing what the server
// rendered (figures, chart, facts, attempts, events, logs) from the application API while the
// application is not terminal. Figures are formatted as streamjobs/web/figures.py does.
"use strict";

(() => {
  const root = document.getElementById("application");
  if (!root) return;

  const api = "/api/v1/applications/" + encodeURIComponent(root.dataset.application);
  const HOUR_MS = 3600 * 1000;
  const REFRESH_MS = 5000;
  const FOLLOW_MS = 3000;
  const FOLLOW_CHUNK = 1024 * 1024;
  const LOG_KEEP_CHARS = 2 * 1024 * 1024;
  const skew = Date.parse(root.dataset.serverNow) - Date.now();
  const serverNow = () => Date.now() + (Number.isFinite(skew) ? skew : 0);
  let state = root.dataset.state;
  const terminal = () => sj.TERMINAL.has(state);

  // ------------------------------------------------------------------ formatting (figures.py)
  const count = (value) => Math.round(value).toLocaleString("en-US");
  function humanBytes(size) {
    if (Math.abs(size) < 1024) return Math.round(size) + " B";
    let unit = "";
    for (unit of ["KiB", "MiB", "GiB", "TiB"]) {
      size /= 1024;
      if (Math.abs(size) < 1024) break;
    }
    return size.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 }) + " " + unit;
  }
  function humanMs(ms) {
    if (Math.abs(ms) < 1000) return Math.round(ms) + " ms";
    const seconds = ms / 1000;
    if (Math.abs(seconds) < 60) return seconds.toFixed(1) + " s";
    if (Math.abs(seconds) < 3600) return (seconds / 60).toFixed(1) + " min";
    return (seconds / 3600).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 }) + " h";
  }
  const pad = (n) => String(n).padStart(2, "0");
  function humanElapsed(seconds) {
    const whole = Math.max(0, Math.floor(seconds));
    const days = Math.floor(whole / 86400), hours = Math.floor((whole % 86400) / 3600);
    const minutes = Math.floor((whole % 3600) / 60), secs = whole % 60;
    if (days) return `${days} d ${pad(hours)} h`;
    if (hours) return `${hours} h ${pad(minutes)} min`;
    if (minutes) return `${minutes} min ${pad(secs)} s`;
    return `${secs} s`;
  }
  function human(value, unit) {
    if (value === null || value === undefined) return "–";
    if (unit === "bytes") return humanBytes(value);
    if (unit === "ms") return humanMs(value);
    return count(value);
  }
  // The same text as the `when` macro: the ISO time to the second, in a <time>.
  function when(iso) {
    if (!iso) return document.createTextNode("–");
    const time = document.createElement("time");
    time.dateTime = iso;
    time.textContent = iso.slice(0, 19).replace("T", " ");
    return time;
  }
  const cell = (content, className) => {
    const td = document.createElement("td");
    if (className) td.className = className;
    td.append(content);
    return td;
  };

  // ------------------------------------------------------------------ tabs
  const tabs = [...root.querySelectorAll('[role="tablist"] [role="tab"]')];
  function selectTab(tab, { focus = false, remember = true } = {}) {
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute("aria-selected", String(selected));
      other.tabIndex = selected ? 0 : -1;
      document.getElementById(other.getAttribute("aria-controls")).hidden = !selected;
    }
    if (focus) tab.focus();
    if (remember) {
      const url = new URL(location.href);
      url.searchParams.delete("tab");
      url.hash = tab.dataset.tab;
      history.replaceState(null, "", url);
    }
    if (tab.dataset.tab === "logs") scrollLogToEnd();
  }
  tabs.forEach((tab, index) => {
    tab.addEventListener("click", (event) => { event.preventDefault(); selectTab(tab); });
    tab.addEventListener("keydown", (event) => {
      const target = { ArrowRight: tabs[(index + 1) % tabs.length], ArrowLeft: tabs[(index - 1 + tabs.length) % tabs.length],
        Home: tabs[0], End: tabs[tabs.length - 1] }[event.key];
      if (target) { event.preventDefault(); selectTab(target, { focus: true }); }
      else if (event.key === " ") { event.preventDefault(); selectTab(tab); }
    });
  });
  const tabOfHash = () => tabs.find((tab) => tab.dataset.tab === location.hash.replace(/^#(panel-)?/, ""));
  window.addEventListener("hashchange", () => { const tab = tabOfHash(); if (tab) selectTab(tab, { remember: false }); });

  // ------------------------------------------------------------------ state, abort
  const abortOpen = document.getElementById("abort-open");
  const abortDialog = document.getElementById("abort-dialog");
  const abortConfirm = document.getElementById("abort-confirm");
  const abortError = document.getElementById("abort-error");
  abortOpen.addEventListener("click", () => { abortError.textContent = ""; abortDialog.showModal(); });
  abortConfirm.addEventListener("click", async () => {
    abortConfirm.disabled = true;
    try {
      const application = await sj.fetchJSON(api + "/abort", { method: "POST" });
      abortDialog.close();
      showState(application.state);
      refreshNow();
    } catch (error) {
      abortError.textContent = error.message;
    } finally {
      abortConfirm.disabled = false;
    }
  });

  function showState(next) {
    state = next;
    root.dataset.state = next;
    sj.setBadge(root.querySelector("[data-app-state]"), next);
    // Without the permission to abort, the button keeps saying so.
    if (terminal() && !abortOpen.hasAttribute("data-forbidden")) {
      abortOpen.disabled = true;
      abortOpen.title = "The application has ended; there is nothing to abort";
    }
  }

  // ------------------------------------------------------------------ details: figures, facts
  function executorTotals(figures) {
    if (!figures) return null;
    const executors = figures.executors || [];
    const sum = (field, keep = () => true) =>
      executors.filter(keep).reduce((total, executor) => total + (Number(executor[field]) || 0), 0);
    const totals = {};
    for (const field of ["completed_tasks", "failed_tasks", "task_time_ms", "shuffle_read_bytes",
      "shuffle_write_bytes", "memory_used_bytes", "disk_used_bytes", "input_bytes", "rdd_blocks",
      "gc_time_ms", "memory_spilled_bytes", "disk_spilled_bytes"]) totals[field] = sum(field);
    totals.driver_task_time_ms = sum("task_time_ms", (executor) => executor.id === "driver");
    totals.total_cores = sum("total_cores", (executor) => executor.is_active);
    totals.spilled_bytes = totals.disk_spilled_bytes;
    return totals;
  }

  function setText(element, text) {
    if (element && element.textContent !== text) element.textContent = text;
  }

  function showFigures(application) {
    const totals = executorTotals(application.executors);
    for (const card of root.querySelectorAll(".metric[data-metric]")) {
      const value = totals ? totals[card.dataset.metric] : null;
      setText(card.querySelector("[data-metric-value]"), human(value, card.dataset.unit));
    }
    setText(root.querySelector("[data-memory-spilled]"), human(totals && totals.memory_spilled_bytes, "bytes"));
    root.querySelector("[data-figures-note]").hidden = Boolean(totals);
    const latest = application.latest || {};
    for (const span of root.querySelectorAll("[data-latest]")) {
      const value = latest[span.dataset.latest];
      const name = span.dataset.latest;
      setText(span, name === "batchDurationMs" ? human(value, "ms")
        : name === "batchId" ? (value ?? "–").toString() : sj.rate(value));
    }
  }

  const fact = (name) => root.querySelector(`[data-fact="${name}"]`);
  function showOptionalFact(name, value) {
    const present = value !== null && value !== undefined && value !== "";
    fact(name).hidden = !present;
    root.querySelector(`[data-fact-term="${name}"]`).hidden = !present;
    setText(fact(name), present ? String(value) : "");
  }
  // A restart's next attempt; once submitted early, when its held queries start.
  function showNextAttempt(application) {
    const iso = application.nextAttemptAt;
    const term = root.querySelector('[data-fact-term="nextAttemptAt"]');
    fact("nextAttemptAt").hidden = term.hidden = !iso;
    setText(term, application.state === "STARTING" ? "Queries start" : "Next attempt");
    if (iso) replaceTime(fact("nextAttemptAt"), iso);
    else fact("nextAttemptAt").replaceChildren();
  }
  function replaceTime(element, iso) {
    if (element.querySelector("time")?.dateTime === iso || (!iso && element.textContent === "–")) return;
    element.replaceChildren(when(iso));
  }

  function showFacts(application) {
    const orDash = (value) => (value === null || value === undefined ? "–" : String(value));
    setText(fact("driverState"), orDash(application.driverState));
    const executors = application.executorState || {};
    setText(fact("executorState"), `${orDash(executors.running)} running, ${orDash(executors.pending)} pending`);
    const restarts = application.restarts ? ` (${application.restarts} restart${application.restarts === 1 ? "" : "s"})` : "";
    setText(fact("attempts"),
      `${application.submissionAttempts} submission, ${application.executionAttempts} execution${restarts}`);
    const finished = terminal() ? application.transitionTime : null;
    root.dataset.finishedAt = finished || "";
    replaceTime(fact("finished"), finished);
    showOptionalFact("exitCode", application.exitCode);
    showOptionalFact("errorMessage", application.errorMessage);
    showNextAttempt(application);
    showDuration();
  }

  function showDuration() {
    const started = Date.parse(root.dataset.createdAt);
    const ended = root.dataset.finishedAt ? Date.parse(root.dataset.finishedAt) : serverNow();
    if (Number.isFinite(started)) setText(fact("duration"), humanElapsed((ended - started) / 1000));
  }

  let shownAttempts = JSON.stringify(JSON.parse(root.dataset.attempts || "[]"));
  function showAttempts(attempts) {
    const key = JSON.stringify(attempts);
    if (key === shownAttempts) return;
    shownAttempts = key;
    const rows = [...attempts].reverse().map((attempt) => {
      const row = document.createElement("tr");
      row.append(cell(String(attempt.number), "num"), cell(when(attempt.submittedAt)), cell(when(attempt.runningAt)),
        cell(when(attempt.endedAt)), cell(attempt.exitCode ?? "–", "num"), cell(attempt.outcome || "–"));
      return row;
    });
    if (rows.length) document.querySelector("#attempts-table tbody").replaceChildren(...rows);
    showAttemptChoices(attempts);
  }

  // ------------------------------------------------------------------ the throughput chart
  const SVG = "http://www.w3.org/2000/svg";
  const chart = document.getElementById("throughput-chart");
  const chartEmpty = root.querySelector("[data-chart-empty]");
  const BOX = { width: 720, height: 240, left: 50, right: 58, top: 20, bottom: 24 };

  function svg(name, attributes, text) {
    const element = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
    if (text !== undefined) element.textContent = text;
    return element;
  }
  const numberOrNull = (value) => (typeof value === "number" && Number.isFinite(value) ? value : null);

  // One point per progress report: the queries' latest rates summed and the slowest batch, as
  // the application's figures are (domain/progress.py application_figures).
  function throughputPoints(items) {
    const latest = new Map();
    let attempt = null;
    const points = [];
    for (const item of items) {
      const progress = item.type === "progress" && item.event && item.event.progress;
      if (!progress) continue;
      const at = Date.parse(progress.timestamp);
      if (!Number.isFinite(at)) continue;
      if (item.attempt !== attempt) { latest.clear(); attempt = item.attempt; }
      latest.set(String(item.event.name || progress.name || progress.id || "query"), {
        input: numberOrNull(progress.inputRowsPerSecond),
        processed: numberOrNull(progress.processedRowsPerSecond),
        duration: numberOrNull((progress.durationMs || {}).triggerExecution),
        batch: progress.batchId,
      });
      const queries = [...latest.values()];
      const total = (name) => {
        const present = queries.map((query) => query[name]).filter((value) => value !== null);
        return present.length ? present.reduce((a, b) => a + b, 0) : null;
      };
      const durations = queries.map((query) => query.duration).filter((value) => value !== null);
      points.push({ at, input: total("input"), processed: total("processed"),
        duration: durations.length ? Math.max(...durations) : null, batch: progress.batchId });
    }
    return points.sort((a, b) => a.at - b.at);
  }

  // An axis's top: four round steps (1, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten) above `value`.
  const AXIS_STEPS = 4;
  function niceCeiling(value) {
    if (!(value > 0)) return AXIS_STEPS;
    const wanted = value / AXIS_STEPS;
    const power = 10 ** Math.floor(Math.log10(wanted));
    const step = [1, 2, 2.5, 3, 4, 5, 6, 8, 10].find((factor) => factor * power >= wanted * (1 - 1e-9));
    return step * power * AXIS_STEPS;
  }
  const shortNumber = (value) => value >= 1e6 ? (value / 1e6).toLocaleString("en-US", { maximumFractionDigits: 1 }) + "M"
    : value >= 1e4 ? (value / 1e3).toLocaleString("en-US", { maximumFractionDigits: 1 }) + "k"
    : value.toLocaleString("en-US", { maximumFractionDigits: value < 10 ? 2 : 1 });

  function drawChart(items) {
    const points = throughputPoints(items);
    const newest = points.length ? points[points.length - 1].at : null;
    const end = terminal() ? newest ?? serverNow() : Math.max(serverNow(), newest ?? 0);
    const start = end - HOUR_MS;
    const shown = points.filter((point) => point.at >= start);
    chart.querySelector("g.plot")?.remove();
    const desc = chart.querySelector("desc");
    if (!shown.length) {
      chartEmpty.textContent = points.length ? "No progress in the last hour." : "No progress reported yet.";
      chartEmpty.hidden = false;
      desc.textContent = chartEmpty.textContent;
      return;
    }
    chartEmpty.hidden = true;
    const last = shown[shown.length - 1];
    desc.textContent = `${shown.length} progress reports. Latest, micro-batch ${last.batch ?? "–"}: input ` +
      `${sj.rate(last.input)} rows/s, processed ${sj.rate(last.processed)} rows/s, batch ${human(last.duration, "ms")}.`;

    const plotWidth = BOX.width - BOX.left - BOX.right;
    const plotHeight = BOX.height - BOX.top - BOX.bottom;
    const rowsMax = niceCeiling(Math.max(0, ...shown.flatMap((p) => [p.input ?? 0, p.processed ?? 0])));
    const durationMax = niceCeiling(Math.max(0, ...shown.map((p) => p.duration ?? 0)));
    const x = (at) => BOX.left + ((at - start) / HOUR_MS) * plotWidth;
    const y = (value, max) => BOX.top + plotHeight - (value / max) * plotHeight;
    const plot = svg("g", { class: "plot" });

    const axis = svg("g", { class: "axis", "aria-hidden": "true" });
    for (let i = 0; i <= AXIS_STEPS; i += 1) {
      const level = BOX.top + plotHeight - (i / AXIS_STEPS) * plotHeight;
      axis.append(svg("line", { class: "grid-line", x1: BOX.left, x2: BOX.left + plotWidth, y1: level, y2: level }));
      axis.append(svg("text", { x: BOX.left - 6, y: level + 4, "text-anchor": "end" }, shortNumber((rowsMax * i) / AXIS_STEPS)));
      axis.append(svg("text", { x: BOX.left + plotWidth + 6, y: level + 4 }, humanMs((durationMax * i) / AXIS_STEPS)));
    }
    const QUARTER_MS = 15 * 60 * 1000;
    for (let at = Math.ceil(start / QUARTER_MS) * QUARTER_MS; at <= end; at += QUARTER_MS) {
      const time = new Date(at);
      const anchor = x(at) < BOX.left + 16 ? "start" : x(at) > BOX.left + plotWidth - 16 ? "end" : "middle";
      axis.append(svg("line", { class: "grid-line", x1: x(at), x2: x(at), y1: BOX.top + plotHeight, y2: BOX.top + plotHeight + 4 }));
      axis.append(svg("text", { x: x(at), y: BOX.height - 6, "text-anchor": anchor },
        `${pad(time.getHours())}:${pad(time.getMinutes())}`));
    }
    axis.append(svg("text", { x: BOX.left - 6, y: BOX.top - 9, "text-anchor": "end" }, "rows/s"));
    axis.append(svg("text", { x: BOX.left + plotWidth + 6, y: BOX.top - 9 }, "batch"));
    plot.append(axis);

    const series = [["input", rowsMax], ["processed", rowsMax], ["duration", durationMax]];
    for (const [name, max] of series) {
      const present = shown.filter((point) => point[name] !== null);
      if (!present.length) continue;
      const path = present.map((point, i) => `${i ? "L" : "M"}${x(point.at).toFixed(1)},${y(point[name], max).toFixed(1)}`);
      plot.append(svg("path", { class: `series series-${name}`, d: path.join(" ") }));
      const newestPoint = present[present.length - 1];
      plot.append(svg("circle", { class: `dot-${name}`, r: 3, cx: x(newestPoint.at).toFixed(1), cy: y(newestPoint[name], max).toFixed(1) }));
    }
    chart.append(plot);
  }

  async function refreshChart() {
    const page = await sj.fetchJSON(api + "/progress?limit=500");
    drawChart(page.items || []);
  }

  // ------------------------------------------------------------------ events
  const eventsTable = document.getElementById("events-table");
  const warningKinds = new Set(eventsTable.dataset.warningKinds.split(" ").filter(Boolean));
  const warningCount = root.querySelector("[data-warning-count]");
  let lastEvent = eventsTable.dataset.lastEvent;

  async function refreshEvents() {
    const query = lastEvent ? "?after=" + encodeURIComponent(lastEvent) : "";
    const page = await sj.fetchJSON(api + "/events" + query);
    const body = eventsTable.tBodies[0];
    for (const event of page.items || []) {
      if (body.querySelector(`tr[data-event="${event.id}"]`)) continue;
      body.querySelector("tr.empty")?.remove();
      const row = document.createElement("tr");
      row.dataset.event = event.id;
      if (warningKinds.has(event.kind)) row.className = "warning";
      const kind = document.createElement("span");
      kind.className = "event-kind";
      kind.textContent = event.kind;
      row.append(cell(when(event.at)), cell(kind), cell(event.message));
      body.append(row);
      lastEvent = String(event.id);
    }
    const warnings = body.querySelectorAll("tr.warning").length;
    warningCount.hidden = warnings === 0;
    warningCount.firstElementChild.textContent = String(warnings);
    warningCount.lastElementChild.textContent = `${warnings} warning${warnings === 1 ? "" : "s"}`;
  }

  // ------------------------------------------------------------------ logs
  const logForm = root.querySelector("[data-log-form]");
  const logText = document.getElementById("log-text");
  const logStatus = root.querySelector("[data-log-status]");
  const instanceSelect = document.getElementById("log-instance");
  const attemptSelect = document.getElementById("log-attempt");
  const linesInput = document.getElementById("log-lines");
  const startInput = document.getElementById("log-start");
  const endInput = document.getElementById("log-end");
  const follow = document.getElementById("log-follow");
  const download = document.getElementById("log-download");
  const log = { start: Number(logText.dataset.start) || 0, end: Number(logText.dataset.end) || 0, attempt: Number(logText.dataset.attempt) || null,
    loaded: logText.dataset.loaded === "true" };
  let followTimer = null;

  const atBottom = () => logText.scrollHeight - logText.scrollTop - logText.clientHeight < 24;
  function scrollLogToEnd() { logText.scrollTop = logText.scrollHeight; }

  function logParams(extra) {
    const params = new URLSearchParams({ instance: instanceSelect.value || "driver" });
    if (attemptSelect.value) params.set("attempt", attemptSelect.value);
    for (const [key, value] of Object.entries(extra)) if (value !== "" && value !== null) params.set(key, value);
    return params;
  }

  function showInstances(instances) {
    const names = Object.keys(instances || {});
    const current = [...instanceSelect.options].map((option) => option.value);
    if (names.length && names.join(" ") !== current.join(" ")) {
      const chosen = instanceSelect.value;
      instanceSelect.replaceChildren(...names.map((name) => new Option(name, name, false, name === chosen)));
    }
    instanceSelect.disabled = names.length === 0;
  }

  function showAttemptChoices(attempts) {
    if (!attempts.length) return;
    const chosen = attemptSelect.value;
    const latest = attempts[attempts.length - 1].number;
    const options = [new Option(`Latest (${latest})`, "", false, chosen === "")];
    for (const attempt of [...attempts].reverse()) {
      const value = String(attempt.number);
      options.push(new Option(value, value, false, value === chosen));
    }
    attemptSelect.replaceChildren(...options);
    attemptSelect.disabled = false;
  }

  function showDownload() {
    const params = new URLSearchParams({ instance: instanceSelect.value });
    if (attemptSelect.value) params.set("attempt", attemptSelect.value);
    if (log.loaded) {
      download.href = `${api}/logs/download?${params}`;
      download.removeAttribute("aria-disabled");
    } else {
      download.removeAttribute("href");
      download.setAttribute("aria-disabled", "true");
    }
  }

  // `from` is where the text shown starts: the piece's start, or an earlier one when appending.
  function showPiece(piece, from = piece.start) {
    log.loaded = true;
    log.start = from;
    log.end = piece.end;
    log.attempt = piece.attempt;
    showInstances(piece.instances);
    setText(logStatus, `${piece.instance} of attempt ${piece.attempt}: bytes ${from}–${piece.end} of ${piece.size}` +
      (follow.checked && following() ? ", following" : ""));
    showDownload();
  }

  function showLogProblem(error) {
    log.loaded = false;
    setText(logStatus, error.status === 404 ? "No logs yet." : error.message);
    showDownload();
  }

  // Load the chosen piece afresh: the last N lines, or a byte range.
  async function loadLog() {
    const ranged = startInput.value !== "" || endInput.value !== "";
    const params = logParams(ranged ? { start: startInput.value || "0", end: endInput.value } : { tail: linesInput.value || "500" });
    try {
      const piece = await sj.fetchJSON(`${api}/logs?${params}`);
      logText.textContent = piece.text;
      showPiece(piece);
      if (!ranged) scrollLogToEnd();
    } catch (error) {
      logText.textContent = "";
      showLogProblem(error);
    }
  }

  const following = () => endInput.value === "";

  // Read what was written since the last read and append it.
  async function followLog() {
    if (!log.loaded) return loadLog();
    const params = logParams({ start: String(log.end), end: String(log.end + FOLLOW_CHUNK) });
    let piece;
    try {
      piece = await sj.fetchJSON(`${api}/logs?${params}`);
    } catch (error) {
      return showLogProblem(error);
    }
    if (log.attempt !== null && piece.attempt !== log.attempt) return loadLog(); // a new attempt
    if (piece.size < log.end) return loadLog(); // the file was cut or replaced
    let from = log.start;
    if (piece.text) {
      const pinned = atBottom();
      logText.append(piece.text);
      if (logText.textContent.length > LOG_KEEP_CHARS) {
        // Keep the newest lines; the byte offset of the first one kept is no longer known.
        const text = logText.textContent;
        logText.textContent = text.slice(text.indexOf("\n", text.length - LOG_KEEP_CHARS) + 1);
        from = "…";
      }
      if (pinned) scrollLogToEnd();
    }
    showPiece(piece, from);
  }

  function scheduleFollow() {
    clearTimeout(followTimer);
    followTimer = null;
    if (!follow.checked || !following() || terminal()) return;
    followTimer = setTimeout(async () => {
      if (!document.hidden) {
        try { await followLog(); } catch (error) { console.warn(error); }
      }
      scheduleFollow();
    }, FOLLOW_MS);
  }

  logForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    await loadLog();
    scheduleFollow();
  });
  for (const control of [instanceSelect, attemptSelect]) {
    control.addEventListener("change", async () => { await loadLog(); scheduleFollow(); });
  }
  follow.addEventListener("change", async () => {
    if (follow.checked) await followLog();
    scheduleFollow();
  });

  // ------------------------------------------------------------------ template: copy
  const copyStatus = root.querySelector("[data-copy-status]");
  for (const button of root.querySelectorAll("[data-copy]")) {
    button.hidden = !navigator.clipboard;
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(document.getElementById(button.dataset.copy).textContent);
        copyStatus.textContent = "Copied.";
      } catch (error) {
        copyStatus.textContent = "The browser refused to copy; select the text instead.";
      }
    });
  }

  // ------------------------------------------------------------------ refreshing
  let settled = false;

  async function refreshApplication() {
    const application = await sj.fetchJSON(api);
    showState(application.state);
    showFigures(application);
    showFacts(application);
    showAttempts(application.attempts || []);
  }

  // The last refresh once the application has ended: final figures, events, chart and log.
  async function settle() {
    if (settled) return;
    settled = true;
    clearInterval(durationTimer);
    clearTimeout(followTimer);
    follow.checked = false;
    follow.disabled = true;
    follow.title = "The application has ended; its logs no longer grow";
    await Promise.allSettled([refreshEvents(), refreshChart(), log.loaded && following() ? followLog() : loadLog()]);
  }

  async function refreshAll() {
    if (settled) return false;
    const results = await Promise.allSettled([refreshApplication(), refreshEvents(), refreshChart()]);
    results.filter((result) => result.status === "rejected").forEach((result) => console.warn(result.reason));
    if (terminal()) {
      await settle();
      return false;
    }
    return true;
  }
  const refreshNow = () => refreshAll().catch((error) => console.warn(error));

  const durationTimer = terminal() ? null : setInterval(showDuration, 1000);
  const start = () => {
    const tab = tabOfHash();
    if (tab) selectTab(tab, { remember: false });
    scrollLogToEnd();
    if (terminal()) {
      settled = true;
      refreshChart().catch((error) => console.warn(error));
    } else {
      sj.poll(refreshAll, REFRESH_MS);
      scheduleFollow();
    }
  };
  start();
})();
