// streamjobs web UI: small helpers the pages use. No framework, no build step, nothing fetched
// from outside the server.
"use strict";

const sj = (() => {
  const csrf = () => document.querySelector('meta[name="csrf-token"]')?.content || "";

  async function fetchJSON(url, options = {}) {
    const headers = { Accept: "application/json", ...(options.headers || {}) };
    const method = (options.method || "GET").toUpperCase();
    if (method !== "GET") headers["X-CSRF-Token"] = csrf();
    let body = options.body;
    if (body !== undefined && typeof body !== "string") {
      body = JSON.stringify(body);
      headers["Content-Type"] = "application/json";
    }
    const response = await fetch(url, { method, headers, body, credentials: "same-origin" });
    const text = await response.text();
    const data = text ? JSON.parse(text) : null;
    if (response.status === 401) {
      window.location = "/signin?next=" + encodeURIComponent(location.pathname + location.search);
    }
    if (!response.ok) {
      const error = new Error((data && data.detail) || response.statusText);
      error.problem = data;
      error.status = response.status;
      throw error;
    }
    return data;
  }

  // Run `task` now and every `ms` while the page is visible; it returns false to stop.
  function poll(task, ms) {
    let timer = null;
    const tick = async () => {
      timer = null;
      if (document.hidden) return schedule();
      let again = true;
      try { again = (await task()) !== false; } catch (error) { console.warn(error); }
      if (again) schedule();
    };
    const schedule = () => { if (!timer) timer = setTimeout(tick, ms); };
    document.addEventListener("visibilitychange", () => { if (!document.hidden) schedule(); });
    tick();
  }

  const LABELS = { STARTING: "Starting", RUNNING: "Running", PENDING_RERUN: "Restarting",
    TERMINATING: "Stopping", SUSPENDED: "Suspended", COMPLETED: "Completed", FAILED: "Failed",
    ABORTED: "Aborted", STOPPED: "Stopped", Idle: "Idle" };
  const TERMINAL = new Set(["COMPLETED", "FAILED", "ABORTED", "STOPPED"]);

  function setBadge(cell, state) {
    cell.dataset.value = state;
    let badge = cell.querySelector(".badge");
    if (!badge) { badge = document.createElement("span"); cell.replaceChildren(badge); }
    badge.className = "badge badge-" + state.toLowerCase();
    badge.dataset.state = state;
    badge.textContent = LABELS[state] || state;
  }

  const rate = (value) => value === null || value === undefined ? "–"
    : Number(value).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });

  function sortable(table) {
    const headers = [...table.querySelectorAll("th[data-sort]")];
    headers.forEach((th) => {
      th.tabIndex = 0;
      const sort = () => {
        const index = [...th.parentNode.children].indexOf(th);
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        headers.forEach((other) => other.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = [...body.rows].filter((row) => !row.classList.contains("empty"));
        const key = (row) => {
          const cell = row.cells[index];
          const value = cell.dataset.value ?? cell.textContent.trim();
          return th.dataset.sort === "number" ? Number(value) : value.toLowerCase();
        };
        rows.sort((a, b) => (key(a) > key(b) ? 1 : key(a) < key(b) ? -1 : 0) * (ascending ? 1 : -1));
        rows.forEach((row) => body.appendChild(row));
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (event) => { if (event.key === "Enter") sort(); });
    });
  }

  // Filter a table's rows by the form's controls, matching each control's data-filter-column
  // against the row's data attribute of that name; the form still works without script.
  function filterable(form) {
    const table = document.getElementById(form.dataset.filterTable);
    const controls = [...form.querySelectorAll("[data-filter-column]")];
    const apply = () => {
      for (const row of table.tBodies[0].rows) {
        if (row.classList.contains("empty")) continue;
        row.hidden = !controls.every((control) => {
          const wanted = control.value.trim().toLowerCase();
          const have = (row.dataset[control.dataset.filterColumn] || "").toLowerCase();
          if (!wanted) return true;
          return control.tagName === "SELECT" ? have.split(" ").includes(wanted) : have.includes(wanted);
        });
      }
      const params = new URLSearchParams();
      controls.forEach((control) => control.value && params.set(control.name, control.value));
      history.replaceState(null, "", location.pathname + (params.size ? "?" + params : ""));
    };
    form.addEventListener("input", apply);
    form.addEventListener("submit", (event) => { event.preventDefault(); apply(); });
  }

  function refreshJobs(table) {
    poll(async () => {
      const page = await fetchJSON("/api/v1/jobs?limit=500");
      for (const job of page.items) {
        const row = table.querySelector(`tr[data-job="${CSS.escape(job.metadata.name)}"]`);
        if (!row) continue;
        const app = job.status.application || {};
        row.dataset.status = job.status.phase;
        setBadge(row.querySelector('[data-cell="status"]'), job.status.phase);
        for (const [name, value] of [["input", app.inputRowsPerSecond], ["processed", app.processedRowsPerSecond]]) {
          const cell = row.querySelector(`[data-cell="${name}"]`);
          cell.dataset.value = value ?? -1;
          cell.textContent = rate(value);
        }
      }
    }, 5000);
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("table.sortable").forEach(sortable);
    document.querySelectorAll("form[data-filter-table]").forEach(filterable);
    document.querySelectorAll("table[data-refresh-jobs]").forEach(refreshJobs);
  });

  return { fetchJSON, poll, setBadge, rate, sortable, filterable, LABELS, TERMINAL };
})();
