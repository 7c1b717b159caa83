// Paging through candidate pools with the keyboard. The page works without this script (links);
// the script adds the keys: J or → the next question, K or ← the previous one.
(function () {
  if (!document.getElementById("pool")) return;
  const keys = { j: "next", arrowright: "next", k: "previous", arrowleft: "previous" };
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey) return;
    if (event.target.closest("input, select, textarea, [contenteditable]")) return;
    const link = document.getElementById(keys[event.key.toLowerCase()] || "");
    if (link) {
      event.preventDefault();
      link.click();
    }
  });
})();
