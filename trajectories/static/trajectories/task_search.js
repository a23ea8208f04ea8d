// The trajectory list's task filter: a search field instead of a drop-down of every task.
// Typing asks the server for up to 20 tasks whose goal contains the text (a datalist shows
// them); picking one copies its id into the hidden `task` input, so the filter names exactly
// that task. Text that matches no suggestion filters by goal text on the server.
(function () {
  "use strict";

  function setUp(input) {
    const list = document.getElementById(input.getAttribute("list"));
    const picked = input.form.elements[input.dataset.pick];
    let timer = null;
    let asked = null;

    function pick() {
      const match = Array.from(list.options).find((o) => o.value === input.value);
      picked.value = match ? match.dataset.id : "";
    }

    async function suggest() {
      const typed = input.value.trim();
      if (typed === asked) return;
      asked = typed;
      const response = await fetch(input.dataset.suggest + "?q=" + encodeURIComponent(typed), {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (!response.ok || asked !== typed) return;
      const found = await response.json();
      list.replaceChildren(
        ...found.tasks.map((task) => {
          const option = document.createElement("option");
          option.value = task.goal;
          option.dataset.id = task.id;
          return option;
        }),
      );
      if (!picked.value) pick();
    }

    input.addEventListener("input", () => {
      pick();
      clearTimeout(timer);
      timer = setTimeout(suggest, 150);
    });
    input.addEventListener("focus", suggest);
  }

  document.querySelectorAll("input[data-suggest][data-pick]").forEach(setUp);
})();
