// Polls the job's status until it finishes; the page works without it (reload).
(function () {
  const card = document.getElementById("job");
  if (!card || card.dataset.finished === "1") return;
  const url = card.dataset.statusUrl;
  const set = (id, value) => { const el = document.getElementById(id); if (el) el.textContent = value; };

  function phaseItem(phase) {
    const li = document.createElement("li");
    li.className = "phase" + (phase.running ? " phase-running" : "");
    const name = document.createElement("span");
    name.className = "phase-name";
    name.textContent = phase.name;
    li.appendChild(name);
    if (phase.running && phase.percent !== null) {
      const bar = document.createElement("progress");
      bar.max = 100;
      bar.value = phase.percent;
      li.append(" ", bar, " " + phase.percent + " % ");
    }
    const facts = document.createElement("span");
    facts.className = "muted";
    facts.textContent = " " + phase.details_text;
    li.appendChild(facts);
    return li;
  }

  async function poll() {
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(response.statusText);
      const job = await response.json();
      if (card.dataset.status === "pending" && job.status !== "pending") {
        window.location.reload();  // a worker took it: the queue's line gives way to its steps
        return;
      }
      const list = document.getElementById("job-phases");
      if (list && job.phases.length) list.replaceChildren(...job.phases.map(phaseItem));
      const shards = job.shards || [];
      const rows = document.querySelectorAll("#job-shards tbody tr");
      if (shards.length !== rows.length) {
        window.location.reload();  // a stage of shards was planned since the page was drawn
        return;
      }
      shards.forEach((shard) => {
        const row = document.getElementById("job-shard-" + (shard.stage ? shard.stage + "-" : "") + shard.number);
        if (!row) return;
        const status = row.querySelector(".status");
        status.textContent = shard.status;
        status.className = "status status-" + shard.status;
        row.querySelector(".shard-attempts").textContent = String(shard.attempts);
        row.querySelector(".shard-worker").textContent = shard.worker || "–";
        row.querySelector(".shard-counts").textContent = shard.counts_text;
      });
      set("job-running", job.running || "");
      document.getElementById("job-running-line").hidden = !job.running;
      set("job-eta", job.eta || "");
      document.getElementById("job-eta-line").hidden = !job.eta;
      const status = document.getElementById("job-status");
      status.textContent = job.status;
      status.className = "status status-" + job.status;
      if (job.finished) {
        window.location.reload();  // the summary, next step and result come with the page
        return;
      }
    } catch (e) { /* transient: try again */ }
    setTimeout(poll, 1000);
  }
  setTimeout(poll, 1000);
})();
