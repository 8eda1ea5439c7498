// streamjobs web UI: small helpers the pages use. No framework, no build step, nothing fetched
// from outside the server. What pages show is rendered by the server and refreshed by htmx
// (static/htmx.min.js); nothing here formats or rebuilds markup.
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

  const TERMINAL = new Set(["COMPLETED", "FAILED", "ABORTED", "STOPPED"]);

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

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("table.sortable").forEach(sortable);
    document.querySelectorAll("form[data-filter-table]").forEach(filterable);
  });

  return { fetchJSON, sortable, filterable, TERMINAL };
})();
