// Shows only the credential field of the chosen login method.
(function () {
  "use strict";
  const radios = document.querySelectorAll("input[name=auth_method]");
  const fields = { key: "field-private_key", password: "field-password" };
  function update() {
    const chosen = document.querySelector("input[name=auth_method]:checked");
    for (const [method, id] of Object.entries(fields)) {
      const box = document.getElementById(id);
      if (box) box.hidden = chosen && chosen.value !== method;
    }
  }
  radios.forEach((radio) => radio.addEventListener("change", update));
  update();
})();
