/* provbench report: filter, search and sort the Questions table. Optional: without scripts the
   whole table shows and the filter form stays hidden. No network, no other script. */
(function () {
  "use strict";
  var form = document.getElementById("explore");
  var table = document.getElementById("records");
  if (!form || !table || !table.tBodies.length) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var fields = form.elements;
  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

  function matches(row, query) {
    var data = row.dataset;
    var pick = function (name) { return !fields[name] || !fields[name].value || data[name] === fields[name].value; };
    var state = fields.state.value;
    return pick("system") && pick("condition") && pick("category") &&
      (!state || (" " + data.flags + " ").indexOf(" " + state + " ") >= 0) &&
      (!query || data.search.indexOf(query) >= 0);
  }

  function apply() {
    var words = fields.q.value.toLowerCase().match(/[\p{L}\p{N}_]+/gu);
    var query = words ? words.join(" ") : "";
    var shown = 0;
    rows.forEach(function (row) {
      var keep = matches(row, query);
      row.hidden = !keep;
      if (keep) { shown += 1; }
    });
    document.getElementById("explore-count").textContent = shown + " of " + rows.length + " records";
  }

  function sortBy(header, column) {
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(header.parentNode.cells, function (cell) { cell.setAttribute("aria-sort", "none"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var text = function (row) { return row.cells[column].textContent.trim(); };
    rows.sort(function (a, b) { return (ascending ? 1 : -1) * collator.compare(text(a), text(b)); });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
    header.tabIndex = 0;
    header.classList.add("sortable");
    header.setAttribute("aria-sort", "none");
    header.addEventListener("click", function () { sortBy(header, column); });
    header.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(header, column); }
    });
  });
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
  form.hidden = false;
  apply();
}());
