// The job form and the YAML editor: fields shown only for the application type, deployment and
// restart policy they apply to; keyboard-usable tabs; rows added and removed; the pipeline
// checked on the server as it is typed; line numbers, and errors that select their line.
// Without script every field stays visible and a blank row is there to add one.
"use strict";

(() => {
  // data-show-when="app_type=python,jvm": shown only while that control has one of the values.
  function conditionalFields(form) {
    const rules = [...form.querySelectorAll("[data-show-when]")].map((element) => {
      const [name, values] = element.dataset.showWhen.split("=");
      return { element, control: form.elements.namedItem(name), values: values.split(",") };
    });
    const apply = () => {
      for (const { element, control, values } of rules) {
        if (control) element.hidden = !values.includes(control.value);
      }
    };
    form.addEventListener("change", apply);
    apply();
  }

  // role="tablist": click or arrow keys (Home, End) choose a tab; a tab whose panel holds an
  // error is marked, and the first of those is chosen when the page opens.
  function tabs(list) {
    const all = [...list.querySelectorAll('[role="tab"]')];
    const panelOf = (tab) => document.getElementById(tab.getAttribute("aria-controls"));
    const choose = (chosen, focus) => {
      for (const tab of all) {
        const selected = tab === chosen;
        tab.setAttribute("aria-selected", String(selected));
        tab.tabIndex = selected ? 0 : -1;
        panelOf(tab).hidden = !selected;
      }
      if (focus) chosen.focus();
    };
    all.forEach((tab, index) => {
      if (panelOf(tab).querySelector(".field-error")) tab.classList.add("has-error");
      tab.addEventListener("click", () => choose(tab, false));
      tab.addEventListener("keydown", (event) => {
        const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: all.length - 1 };
        if (!(event.key in moves)) return;
        event.preventDefault();
        choose(all[(moves[event.key] + all.length) % all.length], true);
      });
    });
    choose(all.find((tab) => tab.classList.contains("has-error")) || all[0], false);
  }

  // Add appends a row from the group's <template>; Remove takes its row out.
  function rowGroup(group) {
    const list = group.querySelector("[data-rows-list]");
    const template = group.querySelector("template[data-row-template]");
    let next = list.children.length;
    group.addEventListener("click", (event) => {
      const remove = event.target.closest("[data-remove-row]");
      if (remove) {
        const row = remove.closest("[data-row]");
        const neighbour = row.nextElementSibling || row.previousElementSibling;
        row.remove();
        (neighbour?.querySelector("input") || group.querySelector("[data-add-row]")).focus();
      } else if (event.target.closest("[data-add-row]")) {
        list.insertAdjacentHTML("beforeend", template.innerHTML.replaceAll("__index__", String(next++)));
        list.lastElementChild.querySelector("input").focus();
      }
    });
  }

  // Show or clear a problem right after a control, tied to it with aria-describedby.
  function setProblem(control, message) {
    const id = control.id + "-error";
    document.getElementById(id)?.remove();
    const described = (control.getAttribute("aria-describedby") || "").split(" ").filter((x) => x && x !== id);
    if (message) {
      const problem = document.createElement("p");
      problem.className = "field-error";
      problem.id = id;
      problem.textContent = message;
      control.insertAdjacentElement("afterend", problem);
      described.unshift(id);
      control.setAttribute("aria-invalid", "true");
    } else {
      control.removeAttribute("aria-invalid");
    }
    if (described.length) control.setAttribute("aria-describedby", described.join(" "));
    else control.removeAttribute("aria-describedby");
  }

  // data-pattern: the syntax the server checks too (tag keys and values), checked as typed.
  function syntaxChecks(form) {
    form.addEventListener("change", (event) => {
      const control = event.target;
      if (!control.dataset?.pattern) return;
      const valid = control.value === "" || new RegExp(control.dataset.pattern).test(control.value);
      setProblem(control, valid ? "" : `'${control.value}' is ${control.dataset.rule}`);
    });
  }

  // Line numbers beside a textarea (which does not wrap lines), kept in step as it scrolls.
  function numbered(textarea) {
    const frame = document.createElement("div");
    frame.className = "numbered";
    const gutter = document.createElement("pre");
    gutter.className = "gutter";
    gutter.setAttribute("aria-hidden", "true");
    textarea.replaceWith(frame);
    frame.append(gutter, textarea);
    let shown = 0;
    const update = () => {
      const count = textarea.value.split("\n").length;
      if (count !== shown) {
        shown = count;
        gutter.textContent = Array.from({ length: count }, (_, i) => i + 1).join("\n") + "\n";
      }
      gutter.scrollTop = textarea.scrollTop;
    };
    textarea.addEventListener("input", update);
    textarea.addEventListener("scroll", () => { gutter.scrollTop = textarea.scrollTop; });
    update();
  }

  function selectLine(textarea, line) {
    const lines = textarea.value.split("\n");
    const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0);
    textarea.focus();
    textarea.setSelectionRange(start, start + (lines[line - 1] || "").length);
    const lineHeight = parseFloat(getComputedStyle(textarea).lineHeight) || 20;
    textarea.scrollTop = Math.max(0, (line - 4) * lineHeight);
  }

  function lineLink(target, line) {
    const link = document.createElement("a");
    link.className = "line";
    link.href = "#" + target;
    link.dataset.gotoLine = line;
    link.dataset.target = target;
    link.textContent = "Line " + line;
    return link;
  }

  // The pipeline block, checked by the server ~400 ms after typing stops (and when the
  // processing guarantee changes); only the answer to the latest text is shown.
  function pipelineCheck(textarea) {
    const panel = document.getElementById(textarea.dataset.checkPanel);
    const status = panel.querySelector("[data-check-status]");
    const list = panel.querySelector("[data-check-problems]");
    const guarantee = textarea.form.elements.namedItem("guarantee");
    let timer = null;
    let latest = 0;
    const show = (errors) => {
      document.getElementById(textarea.id + "-error")?.remove();
      list.replaceChildren(...errors.map((error) => {
        const item = document.createElement("li");
        if (error.line) item.append(lineLink(textarea.id, error.line), " ");
        if (error.path) {
          const path = document.createElement("code");
          path.textContent = error.path;
          item.append(path, ": ");
        }
        item.append(error.message);
        return item;
      }));
      status.textContent = errors.length === 0 ? "No problems found."
        : errors.length === 1 ? "1 problem:" : `${errors.length} problems:`;
      if (errors.length) textarea.setAttribute("aria-invalid", "true");
      else textarea.removeAttribute("aria-invalid");
    };
    const check = async () => {
      const mine = ++latest;
      status.textContent = "Checking…";
      try {
        const answer = await sj.fetchJSON(textarea.dataset.checkUrl, {
          method: "POST",
          body: { yaml: textarea.value, guarantee: guarantee ? guarantee.value : "" },
        });
        if (mine === latest) show(answer.errors);
      } catch (error) {
        if (mine === latest) status.textContent = "The pipeline could not be checked: " + error.message;
      }
    };
    const schedule = () => { clearTimeout(timer); timer = setTimeout(check, 400); };
    textarea.addEventListener("input", schedule);
    guarantee?.addEventListener("change", schedule);
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest("[data-goto-line]");
    if (!link) return;
    event.preventDefault();
    selectLine(document.getElementById(link.dataset.target), Number(link.dataset.gotoLine));
  });

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("form[data-job-form]").forEach((form) => {
      conditionalFields(form);
      syntaxChecks(form);
    });
    document.querySelectorAll('[role="tablist"]').forEach(tabs);
    document.querySelectorAll("[data-rows]").forEach(rowGroup);
    document.querySelectorAll("textarea[data-numbered]").forEach(numbered);
    document.querySelectorAll("textarea[data-check-url]").forEach(pipelineCheck);
  });
})();
