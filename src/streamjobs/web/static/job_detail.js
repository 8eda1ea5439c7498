// A job's page: tabs, dialogs, Copy buttons and the row menus. Only what must happen in the
// browser is here: the server renders every row, state and figure, and htmx swaps them in while
// an application is active (job_applications.html). The dialog and Copy helpers also serve the
// Template JSON, Access tokens and other settings pages.
"use strict";

(() => {
  // ---- dialogs and Copy buttons (any page) ----

  function openDialog(dialog, opener) {
    // An item of a row's menu is hidden once chosen: focus goes back to the menu's button.
    const menuButton = opener?.closest(".menu")?.querySelector("[data-menu-button]");
    dialog.returnFocusTo = menuButton || opener || document.activeElement;
    // A snapshot's "Start from it" opens Run from… with that snapshot chosen; Run from… itself
    // opens it on the checkpoint as it is.
    const startFrom = dialog.querySelector('select[name="from_snapshot"]');
    if (startFrom) startFrom.value = opener?.dataset.startFrom ?? "";
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
      const item = event.target.closest('[role="menuitem"]');
      if (!item || item.disabled) return;
      const trigger = item.closest(".menu").querySelector("[data-menu-button]");
      setMenu(trigger, false);
      // Stop app and Resume app open their dialog through data-open-dialog (wireDialogsAndCopy).
      if (item.dataset.abort) onAbort(item.dataset.abort, item.dataset.abortName, trigger);
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

  // ---- Abort app: the row's menu item names the application the one dialog aborts ----

  function wireAbort(table) {
    const dialog = document.getElementById("abort-dialog");
    const form = dialog.querySelector("form[data-abort-form]");
    wireMenus(table, (id, name, opener) => {
      form.action = `/applications/${encodeURIComponent(id)}/abort`;
      dialog.querySelector("[data-abort-target]").textContent = name;
      openDialog(dialog, opener);
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    wireDialogsAndCopy();
    document.querySelectorAll('[role="tablist"]').forEach(wireTabs);
    const table = document.getElementById("applications-table");
    if (table) wireAbort(table);
  });
})();
