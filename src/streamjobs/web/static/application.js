// The application page's behaviour that HTML cannot give: tabs kept in the URL hash, the Abort
// dialog, following the driver's log, and copying the template. Everything the page shows is
// rendered by the server; htmx refreshes those parts (see application_status.html), so nothing
// here formats a figure or rebuilds markup.
"use strict";

(() => {
  const root = document.getElementById("application");
  if (!root) return;

  const api = "/api/v1/applications/" + encodeURIComponent(root.dataset.application);
  const FOLLOW_MS = 3000;
  const FOLLOW_CHUNK = 1024 * 1024;
  const LOG_KEEP_CHARS = 2 * 1024 * 1024;
  // The state the server rendered last (htmx swaps #app-figures with the current one).
  const state = () => document.getElementById("app-figures")?.dataset.state || "";
  const terminal = () => sj.TERMINAL.has(state());
  const setText = (element, text) => { if (element && element.textContent !== text) element.textContent = text; };

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

  // ------------------------------------------------------------------ abort
  // The button is swapped by htmx as the state changes, so its clicks are caught on the page.
  const abortDialog = document.getElementById("abort-dialog");
  const abortConfirm = document.getElementById("abort-confirm");
  const abortError = document.getElementById("abort-error");
  root.addEventListener("click", (event) => {
    if (!event.target.closest("#abort-open")) return;
    abortError.textContent = "";
    abortDialog.showModal();
  });
  abortConfirm.addEventListener("click", async () => {
    abortConfirm.disabled = true;
    try {
      await sj.fetchJSON(api + "/abort", { method: "POST" });
      abortDialog.close();
      document.body.dispatchEvent(new Event("refresh-status"));
    } catch (error) {
      abortError.textContent = error.message;
    } finally {
      abortConfirm.disabled = false;
    }
  });

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

  // ------------------------------------------------------------------ the end of the application
  // Once a refreshed status says the application has ended, the log is read one last time.
  let settled = terminal();
  document.body.addEventListener("htmx:afterSwap", () => {
    if (settled || !terminal()) return;
    settled = true;
    clearTimeout(followTimer);
    follow.checked = false;
    follow.disabled = true;
    follow.title = "The application has ended; its logs no longer grow";
    (log.loaded && following() ? followLog() : loadLog()).catch((error) => console.warn(error));
  });

  const tab = tabOfHash();
  if (tab) selectTab(tab, { remember: false });
  scrollLogToEnd();
  if (!settled) scheduleFollow();
})();
