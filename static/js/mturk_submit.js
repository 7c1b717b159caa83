// Hands the finished assignment to MTurk at once (the form's button does the same without script).
(function () {
  const form = document.getElementById("mturk-submit");
  if (form) form.submit();
})();
