// A read-only field marked data-select-on-focus selects its whole text when focused (to copy it).
document.querySelectorAll("[data-select-on-focus]").forEach((field) => {
  field.addEventListener("focus", () => field.select());
});
