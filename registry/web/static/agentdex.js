// Agentdex: small enhancements of pages that already work without JavaScript.
"use strict";

(function () {
  var FOCUS_KEY = "agentdex-focus";
  document.documentElement.classList.add("js");

  // Facet checkboxes and the sort menu submit the search at once (their "Apply" buttons are hidden
  // by the stylesheet). The control that changed gets the focus back on the new page.
  function submitOnChange(control) {
    control.addEventListener("change", function () {
      var form = control.form;
      if (!form) return;
      try {
        sessionStorage.setItem(FOCUS_KEY, JSON.stringify([control.name, control.value]));
      } catch (e) { /* storage off: the focus starts at the top */ }
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
    });
  }
  document.querySelectorAll('input[type="checkbox"][form="search"], select[data-autosubmit]').forEach(submitOnChange);

  function restoreFocus() {
    var saved;
    try {
      saved = JSON.parse(sessionStorage.getItem(FOCUS_KEY) || "null");
      sessionStorage.removeItem(FOCUS_KEY);
    } catch (e) { return; }
    if (!saved) return;
    var controls = document.querySelectorAll('[form="search"]');
    for (var i = 0; i < controls.length; i++) {
      var c = controls[i];
      if (c.name === saved[0] && (c.tagName === "SELECT" || c.value === saved[1])) { c.focus(); return; }
    }
  }
  restoreFocus();

  // On a narrow screen the filters start folded, unless some are chosen.
  var filters = document.getElementById("filters");
  if (filters && !filters.hasAttribute("data-chosen") && window.matchMedia("(max-width: 47.99rem)").matches) {
    filters.open = false;
  }

  // Copy buttons: <button type="button" data-copy="text" hidden>Copy</button> is shown, and
  // copies its text; a live region says whether that worked.
  var announcer = null;
  function announce(message) {
    if (!announcer) {
      announcer = document.createElement("p");
      announcer.className = "visually-hidden";
      announcer.setAttribute("role", "status");
      document.body.appendChild(announcer);
    }
    announcer.textContent = message;
  }
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) { // plain http: the older way
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "visually-hidden";
      document.body.appendChild(area);
      area.select();
      var done = document.execCommand("copy");
      document.body.removeChild(area);
      if (done) resolve(); else reject(new Error("copy refused"));
    });
  }
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      copyText(button.getAttribute("data-copy")).then(function () {
        button.textContent = "Copied";
        announce("Copied to the clipboard");
        setTimeout(function () { button.textContent = label; }, 1500);
      }, function () {
        announce("Could not copy; select the text instead");
      });
    });
  });
})();
