// Polls the job's status until it finishes; the page works without it (reload).
(function () {
  const card = document.getElementById("job");
  if (!card || card.dataset.finished === "1") return;
  const url = card.dataset.statusUrl;
  const set = (id, value) => { const el = document.getElementById(id); if (el) el.textContent = value; };
  async function poll() {
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(response.statusText);
      const job = await response.json();
      document.getElementById("job-progress").value = job.progress;
      set("job-percent", job.progress);
      set("job-done", job.done_count);
      set("job-total", job.total_count);
      set("job-phase", job.phase || "");
      document.getElementById("job-phase-line").hidden = !job.phase;
      const status = document.getElementById("job-status");
      status.textContent = job.status;
      status.className = "status status-" + job.status;
      if (job.finished) {
        set("job-result", JSON.stringify(job.result, null, 2));
        const error = document.getElementById("job-error");
        if (job.error) { error.textContent = job.error; error.hidden = false; }
        window.location.reload();
        return;
      }
    } catch (e) { /* transient: try again */ }
    setTimeout(poll, 1000);
  }
  setTimeout(poll, 1000);
})();
