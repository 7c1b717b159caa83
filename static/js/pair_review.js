// Keyboard-first review of contrastive pairs. The page works without this script (buttons,
// links and a text box); the script adds the keys: A accept, R reject, E edit, U back to
// pending, J / K next / previous; in the edit box Enter saves and Esc leaves.
(function () {
  const pair = document.getElementById("pair");
  if (!pair) return;
  const box = document.getElementById("edit-incorrect");
  const click = (id) => { const el = document.getElementById(id); if (el) el.click(); };
  const submitted = new WeakSet();
  document.querySelectorAll("form").forEach((form) => {
    form.addEventListener("submit", (event) => {
      // one decision per page: a second key press or double click sends nothing more
      if (submitted.has(form)) { event.preventDefault(); return; }
      submitted.add(form);
    });
  });
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      document.getElementById("form-edit").requestSubmit();
    } else if (event.key === "Escape") {
      box.blur();
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.target === box || event.ctrlKey || event.metaKey || event.altKey) return;
    const actions = { a: "accept", r: "reject", u: "undo", j: "next", k: "previous" };
    const key = event.key.toLowerCase();
    if (key === "e") {
      event.preventDefault();
      box.focus();
      box.setSelectionRange(box.value.length, box.value.length);
    } else if (actions[key]) {
      event.preventDefault();
      click(actions[key]);
    }
  });
})();
