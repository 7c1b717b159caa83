// Keyboard-first scoring. The page works without this script (plain radio buttons and a submit
// button); the script adds keys, focus, the countdown and the time taken.
(function () {
  const form = document.getElementById("unit-form");
  if (!form) return;
  // A monotonic clock: a clock set back while the page is open cannot make the time negative.
  const started = performance.now();
  const MAX_DURATION_MS = 24 * 60 * 60 * 1000; // what the server accepts (unit_submit)
  const responses = Array.from(form.querySelectorAll(".response"));
  const left = document.getElementById("left");
  const submit = document.getElementById("submit");

  const valueOf = (fieldset) => {
    const checked = fieldset.querySelector('input[type="radio"]:checked');
    return checked ? Number(checked.value) : null;
  };
  const unscored = () => responses.filter((r) => valueOf(r) === null);

  function refresh() {
    for (const r of responses) {
      const v = valueOf(r);
      r.classList.toggle("scored", v !== null);
      r.classList.toggle("low", v !== null && v <= 2);
      if (v === null || v > 2) {
        r.querySelectorAll(".reasons input").forEach((c) => { c.checked = false; });
        const reasons = r.querySelector(".reasons details");
        if (reasons) reasons.open = false; // folded again: "add a reason" opens it
      }
    }
    const n = unscored().length;
    left.textContent = n ? `${n} response${n > 1 ? "s" : ""} left` : "All scored";
    submit.disabled = n > 0;
  }

  function focusNext(from, step) {
    const i = responses.indexOf(from);
    const next = responses[Math.min(responses.length - 1, Math.max(0, i + step))];
    if (next) next.focus();
  }

  form.addEventListener("change", refresh);
  form.addEventListener("keydown", (event) => {
    const current = event.target.closest(".response");
    if (event.target.matches('input[type="checkbox"]') && event.key !== "Enter") return;
    // Enter and Space on "add a reason" open or fold the reasons (the browser's own toggle).
    if (event.target.matches("summary") && (event.key === "Enter" || event.key === " ")) return;
    // A digit scores only when the scale has it (rating datasets have no 0).
    const radio = /^[0-9]$/.test(event.key) && current
      ? current.querySelector(`input[type="radio"][value="${event.key}"]`) : null;
    if (radio) {
      radio.checked = true;
      refresh();
      // Move on at once (reasons for a low score are optional and can be ticked afterwards).
      const next = unscored()[0];
      if (next) next.focus();
      event.preventDefault();
    } else if ((event.key === "ArrowDown" || event.key === "ArrowUp") && current) {
      focusNext(current, event.key === "ArrowDown" ? 1 : -1);
      event.preventDefault();
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (unscored().length === 0) form.requestSubmit();
      else { unscored()[0].focus(); left.classList.add("warn"); }
    }
  });
  form.addEventListener("submit", () => {
    const taken = Math.round(performance.now() - started);
    document.getElementById("duration-ms").value = String(Math.min(MAX_DURATION_MS, Math.max(0, taken)));
    submit.disabled = true; // a double click sends once; the server ignores repeats anyway
  });

  const lease = document.getElementById("lease");
  let seconds = Number(lease.dataset.secondsLeft);
  function tick() {
    const m = Math.floor(seconds / 60), s = seconds % 60;
    lease.textContent = seconds > 0 ? `${m}:${String(s).padStart(2, "0")}` : "time is up";
    lease.classList.toggle("warn", seconds < 120);
    if (seconds > 0) { seconds -= 1; setTimeout(tick, 1000); }
  }
  tick();
  refresh();
  // On a phone the guidelines start folded so that the dialogue and the responses come first.
  const guidelines = document.querySelector(".guidelines");
  if (guidelines && window.matchMedia("(max-width: 800px)").matches) guidelines.open = false;
  if (responses[0]) responses[0].focus();
})();
