// A job's page: tabs, dialogs, Copy buttons, Run, the row menus with Abort app, and the
// applications table kept up to date while an application is active. The dialog and Copy helpers
// also serve the Template JSON and Access tokens pages. Uses the `sj` helpers of app.js.
"use strict";

(() => {
  const ACTIVE = new Set(["STARTING", "RUNNING", "PENDING_RERUN", "TERMINATING"]);
  const REFRESH_MS = 5000;

  // ---- dialogs and Copy buttons (any page) ----

  function openDialog(dialog, opener) {
    dialog.returnFocusTo = opener || document.activeElement;
    dialog.showModal();
  }

  function closeDialog(dialog) {
    dialog.close();
    dialog.returnFocusTo?.focus?.();
  }

  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return;
    }
    const scratch = document.createElement("textarea");
    scratch.value = text;
    scratch.setAttribute("readonly", "");
    scratch.style.position = "fixed";
    scratch.style.opacity = "0";
    document.body.appendChild(scratch);
    scratch.select();
    const copied = document.execCommand("copy");
    scratch.remove();
    if (!copied) throw new Error("the browser refused to copy");
  }

  function copyStatusNear(element) {
    const scope = element.closest("dialog") || document;
    return scope.querySelector("[data-copy-status]");
  }

  async function copyFrom(button) {
    const source = document.getElementById(button.dataset.copy);
    const status = copyStatusNear(button);
    const label = button.getAttribute("aria-describedby");
    const what = label ? document.getElementById(label)?.textContent.trim() : "";
    try {
      await copyText(source.value ?? source.textContent);
      if (status) status.textContent = what ? `Copied: ${what}` : "Copied";
      button.classList.add("copied");
      setTimeout(() => button.classList.remove("copied"), 1500);
    } catch (error) {
      if (status) status.textContent = `Could not copy (${error.message}); select the text instead.`;
    }
  }

  function wireDialogsAndCopy() {
    document.addEventListener("click", (event) => {
      const opener = event.target.closest("[data-open-dialog]");
      if (opener) {
        openDialog(document.getElementById(opener.dataset.openDialog), opener);
        return;
      }
      const closer = event.target.closest("[data-close-dialog]");
      if (closer) {
        closeDialog(closer.closest("dialog"));
        return;
      }
      const copier = event.target.closest("[data-copy]");
      if (copier) copyFrom(copier);
    });
  }

  // ---- tabs ----

  function wireTabs(tablist) {
    const tabs = [...tablist.querySelectorAll('[role="tab"]')];
    const select = (tab, focus) => {
      for (const other of tabs) {
        const selected = other === tab;
        other.setAttribute("aria-selected", String(selected));
        other.tabIndex = selected ? 0 : -1;
        document.getElementById(other.getAttribute("aria-controls")).hidden = !selected;
      }
      if (focus) tab.focus();
      const params = new URLSearchParams(location.search);
      if (tab.dataset.tab === "applications") params.delete("tab");
      else params.set("tab", tab.dataset.tab);
      history.replaceState(null, "", location.pathname + (params.size ? "?" + params : ""));
    };
    tablist.addEventListener("click", (event) => {
      const tab = event.target.closest('[role="tab"]');
      if (!tab) return;
      event.preventDefault();
      select(tab, true);
    });
    tablist.addEventListener("keydown", (event) => {
      const index = tabs.indexOf(document.activeElement);
      if (index < 0) return;
      const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 };
      if (event.key in moves) {
        event.preventDefault();
        select(tabs[(moves[event.key] + tabs.length) % tabs.length], true);
      } else if (event.key === " ") {
        event.preventDefault();
        select(tabs[index], true);
      }
    });
  }

  // ---- row menus ----

  function closeMenus(except) {
    document.querySelectorAll("[data-menu-button][aria-expanded='true']").forEach((button) => {
      if (button !== except) setMenu(button, false);
    });
  }

  function setMenu(button, open) {
    const menu = button.parentElement.querySelector('[role="menu"]');
    button.setAttribute("aria-expanded", String(open));
    menu.hidden = !open;
    if (!open) return;
    // Fixed, so the table's scrolling box does not clip it.
    const box = button.getBoundingClientRect();
    menu.style.top = `${box.bottom + 4}px`;
    menu.style.left = `${Math.max(8, box.right - menu.offsetWidth)}px`;
    const first = menu.querySelector('[role="menuitem"]:not(:disabled)');
    (first || button).focus({ preventScroll: true });
  }

  function wireMenus(table, onAbort) {
    table.addEventListener("click", (event) => {
      const button = event.target.closest("[data-menu-button]");
      if (button) {
        const open = button.getAttribute("aria-expanded") !== "true";
        closeMenus(button);
        setMenu(button, open);
        return;
      }
      const item = event.target.closest("[data-abort]");
      if (item && !item.disabled) {
        const trigger = item.closest(".menu").querySelector("[data-menu-button]");
        setMenu(trigger, false);
        onAbort(item.dataset.abort, item.dataset.abortName, trigger);
      }
    });
    table.addEventListener("keydown", (event) => {
      const menu = event.target.closest('[role="menu"]');
      const button = event.target.closest(".menu")?.querySelector("[data-menu-button]");
      if (!button) return;
      if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
        event.preventDefault();
        setMenu(button, false);
        button.focus();
      } else if (menu && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
        event.preventDefault();
        const items = [...menu.querySelectorAll('[role="menuitem"]:not(:disabled)')];
        const next = items.indexOf(document.activeElement) + (event.key === "ArrowDown" ? 1 : -1);
        items[(next + items.length) % items.length]?.focus();
      } else if (!menu && event.key === "ArrowDown" && event.target === button) {
        event.preventDefault();
        closeMenus(button);
        setMenu(button, true);
      }
    });
    document.addEventListener("click", (event) => {
      if (!event.target.closest(".menu")) closeMenus(null);
    });
    document.addEventListener("focusin", (event) => {
      if (!event.target.closest(".menu")) closeMenus(null);
    });
    window.addEventListener("resize", () => closeMenus(null));
    window.addEventListener("scroll", () => closeMenus(null), true);
  }

  // ---- the applications table ----

  function formatDuration(seconds) {
    const total = Math.max(0, Math.floor(seconds));
    const days = Math.floor(total / 86400);
    const hours = Math.floor((total % 86400) / 3600);
    const minutes = Math.floor((total % 3600) / 60);
    const secs = total % 60;
    const two = (n) => String(n).padStart(2, "0");
    if (days) return `${days}d ${two(hours)}h ${two(minutes)}m`;
    if (hours) return `${hours}h ${two(minutes)}m ${two(secs)}s`;
    if (minutes) return `${minutes}m ${two(secs)}s`;
    return `${secs}s`;
  }

  const setText = (element, text) => {
    if (element && element.textContent !== text) element.textContent = text;
  };

  function setTags(cell, tags) {
    const pills = Object.entries(tags).map(([key, value]) => {
      const pill = document.createElement("span");
      pill.className = "tag";
      pill.textContent = `${key}: ${value}`;
      return pill;
    });
    if (!pills.length) {
      const none = document.createElement("span");
      none.className = "muted";
      none.textContent = "none";
      pills.push(none);
    }
    cell.replaceChildren(...pills);
  }

  function applicationsTable(table) {
    const job = table.dataset.job;
    const body = table.tBodies[0];
    const empty = body.querySelector("[data-empty]");
    const rowTemplate = document.getElementById("application-row");
    const filterForm = document.querySelector('form[data-filter-table="applications-table"]');
    const summary = document.querySelector("[data-filter-summary]");
    const jobStatus = document.querySelector("[data-job-status]");
    const serverOffset = Date.parse(table.dataset.now) - Date.now();
    const serverNow = () => Date.now() + serverOffset;
    const rows = () => [...body.rows].filter((row) => !row.hasAttribute("data-empty"));
    const anyActive = () => rows().some((row) => ACTIVE.has(row.dataset.state));

    function refusal(state) {
      if (sj.TERMINAL.has(state)) return table.dataset.refusalEnded;
      if (state === "TERMINATING") return table.dataset.refusalStopping;
      return null;
    }

    function showDuration(row) {
      const started = Date.parse(row.dataset.created);
      const ended = row.dataset.ended ? Date.parse(row.dataset.ended) : serverNow();
      setText(row.querySelector('[data-cell="duration"]'), formatDuration((ended - started) / 1000));
    }

    function fill(row, app, fresh) {
      Object.assign(row.dataset, {
        id: app.id,
        search: `${app.name} ${app.id}`.toLowerCase(),
        state: app.state,
        runAs: app.runAs,
        triggeredBy: app.triggeredBy,
        tags: Object.entries(app.tags).map(([key, value]) => `${key}=${value}`).join(" "),
        created: app.createdAt,
        ended: ACTIVE.has(app.state) ? "" : app.transitionTime,
      });
      const cell = (name) => row.querySelector(`[data-cell="${name}"]`);
      if (fresh) {
        const link = cell("name").querySelector("a");
        link.href = "/applications/" + encodeURIComponent(app.id);
        link.textContent = app.name;
        setText(cell("id"), app.id);
        const time = cell("started").querySelector("time");
        time.dateTime = app.createdAt;
        time.textContent = app.createdAt.slice(0, 19).replace("T", " ");
        setText(cell("started-by"), app.triggeredBy);
        setText(cell("namespace"), app.namespace);
        setText(cell("run-as"), app.runAs);
        setText(cell("triggered-by"), app.triggeredBy);
        setTags(cell("tags"), app.tags);
        const menu = row.querySelector('[role="menu"]');
        menu.id = "menu-" + app.id;
        menu.setAttribute("aria-label", `Actions for ${app.name}`);
        row.querySelector("[data-menu-button]").setAttribute("aria-controls", menu.id);
      }
      const stateCell = cell("state");
      if (stateCell.dataset.value !== app.state) sj.setBadge(stateCell, app.state);
      let driver = cell("driver");
      if (app.driverState) {
        if (!driver) {
          driver = document.createElement("div");
          driver.className = "small muted";
          driver.dataset.cell = "driver";
          stateCell.appendChild(driver);
        }
        setText(driver, `driver ${app.driverState.toLowerCase()}`);
      } else if (driver) {
        driver.remove();
      }
      setText(cell("executors"), `${app.executorState.running} / ${app.executorState.pending}`);
      setText(cell("attempts"), `${app.submissionAttempts} / ${app.executionAttempts}`);
      showDuration(row);
      const abort = row.querySelector("[data-abort]");
      abort.dataset.abort = app.id;
      abort.dataset.abortName = app.name;
      // Without the permission to abort, that is the reason, whatever the application's state.
      const forbidden = table.dataset.abortForbidden;
      const reason = forbidden || refusal(app.state);
      abort.disabled = Boolean(reason);
      if (reason) abort.title = reason;
      else abort.removeAttribute("title");
      if (forbidden) abort.setAttribute("aria-describedby", "abort-refused-why");
    }

    function updateSummary() {
      const all = rows();
      empty.hidden = all.length > 0;
      setText(summary, `${all.filter((row) => !row.hidden).length} of ${all.length} applications shown`);
    }

    // Rows are updated in place and new ones go on top, so nothing under the pointer moves.
    function upsert(applications) {
      let added = false;
      for (const app of [...applications].reverse()) {
        const existing = body.querySelector(`tr[data-id="${CSS.escape(app.id)}"]`);
        if (existing) {
          fill(existing, app, false);
          continue;
        }
        const row = rowTemplate.content.firstElementChild.cloneNode(true);
        fill(row, app, true);
        body.insertBefore(row, rows()[0] || empty);
        added = true;
      }
      if (applications.length) {
        const newest = rows()[0];
        if (newest) sj.setBadge(jobStatus, newest.dataset.state);
      }
      if (added && filterForm) filterForm.dispatchEvent(new Event("input"));
      updateSummary();
    }

    let refreshWanted = false;
    async function refresh() {
      if (!refreshWanted && !anyActive()) return;
      refreshWanted = false;
      const url = `/api/v1/jobs/${encodeURIComponent(job)}/applications?limit=20`;
      upsert((await sj.fetchJSON(url)).items);
    }

    sj.poll(refresh, REFRESH_MS);
    setInterval(() => rows().forEach((row) => { if (!row.dataset.ended) showDuration(row); }), 1000);
    filterForm?.addEventListener("input", updateSummary);

    // Run
    const runForm = document.querySelector("form[data-run-job]");
    const runMessage = document.querySelector("[data-run-message]");
    const say = (text, isError) => {
      runMessage.textContent = text;
      runMessage.classList.toggle("error", Boolean(isError));
    };
    runForm?.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = runForm.querySelector('button[type="submit"]');
      button.disabled = true;
      try {
        const app = await sj.fetchJSON(`/api/v1/jobs/${encodeURIComponent(job)}/run`, { method: "POST" });
        upsert([app]);
        say(`Started ${app.name}.`, false);
        refreshWanted = true;
      } catch (error) {
        say(error.message, true);
      } finally {
        button.disabled = false;
      }
    });

    // Abort app
    const abortDialog = document.getElementById("abort-dialog");
    const abortForm = abortDialog.querySelector("form[data-abort-form]");
    const abortError = abortDialog.querySelector("[data-dialog-error]");
    wireMenus(table, (id, name, opener) => {
      abortForm.action = `/applications/${encodeURIComponent(id)}/abort`;
      abortForm.dataset.applicationId = id;
      setText(abortDialog.querySelector("[data-abort-target]"), name);
      abortError.hidden = true;
      openDialog(abortDialog, opener);
    });
    abortForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = abortForm.querySelector('button[type="submit"]');
      button.disabled = true;
      try {
        const id = encodeURIComponent(abortForm.dataset.applicationId);
        const app = await sj.fetchJSON(`/api/v1/applications/${id}/abort`, { method: "POST" });
        upsert([app]);
        closeDialog(abortDialog);
        say(`Abort of ${app.name} requested.`, false);
        refreshWanted = true;
      } catch (error) {
        abortError.textContent = error.message;
        abortError.hidden = false;
      } finally {
        button.disabled = false;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    wireDialogsAndCopy();
    document.querySelectorAll('[role="tablist"]').forEach(wireTabs);
    const table = document.getElementById("applications-table");
    if (table) applicationsTable(table);
  });
})();
